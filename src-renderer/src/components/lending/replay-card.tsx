import type { FormEvent } from 'react';
import {
  changedSettings,
  REPLAY_FORM_KEYS,
  REPLAY_RANGES_MS,
  REPLAY_SETTING_KINDS,
  replayNotes,
  replayRows,
  settingPlaceholder,
} from '../../lending/replay-view';
import { rangeLabel } from '../../store/timeline-slice';
import { useAppStore } from '../../store/use-app-store';
import { Notice } from '../notice';
import { ReplayLinksEditor } from './replay-links-editor';

/**
 * What-if replay: the recorded arrivals of the last minutes replayed through the lending rules with changed
 * settings or links (`replay-links-editor.tsx`: remove recorded ones, add others), recorded and replayed side by side. The numbers are the node's (lending/replay-view.ts
 * turns them into rows); nothing is changed on the cluster.
 */
export function ReplayCard() {
  const replay = useAppStore((s) => s.replay);
  const setDraft = useAppStore((s) => s.setReplayDraft);
  const run = useAppStore((s) => s.runReplay);
  const { draft, result, failure } = replay;
  const rows = result ? replayRows(result) : [];
  const notes = result ? replayNotes(result) : [];
  const ranWith = replay.ranWith ? changedSettings(replay.ranWith) : [];

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void run();
  };

  return (
    <div className="card" data-testid="replay-card">
      <div className="card-head">
        <h2>What-if replay</h2>
        <span className="muted small">
          the recorded requests of a range replayed in simulated time with other settings or links
        </span>
      </div>
      <form className="filters" onSubmit={submit} data-testid="replay-form">
        <label className="filter">
          <span>Time</span>
          <select
            value={draft.rangeMs}
            onChange={(e) => setDraft({ rangeMs: Number(e.target.value) })}
            data-testid="replay-range"
          >
            {REPLAY_RANGES_MS.map((r) => (
              <option key={r} value={r}>
                last {rangeLabel(r)}
              </option>
            ))}
          </select>
        </label>
        {REPLAY_FORM_KEYS.map((key) =>
          REPLAY_SETTING_KINDS[key] === 'bool' ? (
            <label className="filter" key={key}>
              <span>{key}</span>
              <select
                value={draft.settings[key] ?? ''}
                onChange={(e) => setDraft({ settings: { [key]: e.target.value } })}
                data-testid={`replay-setting-${key}`}
              >
                <option value="">as recorded</option>
                <option value="true">on</option>
                <option value="false">off</option>
              </select>
            </label>
          ) : (
            <label className="filter" key={key}>
              <span>{key}</span>
              <input
                size={10}
                placeholder={settingPlaceholder(result, key)}
                value={draft.settings[key] ?? ''}
                aria-invalid={failure?.param === `settings.${key}`}
                onChange={(e) => setDraft({ settings: { [key]: e.target.value } })}
                data-testid={`replay-setting-${key}`}
              />
            </label>
          ),
        )}
        <ReplayLinksEditor />
        <div className="filter-actions">
          <button type="submit" className="primary" disabled={replay.running} data-testid="replay-run">
            {replay.running ? 'Replaying…' : 'Replay'}
          </button>
        </div>
      </form>
      {failure && (
        <Notice kind="error" testId="replay-error">
          {failure.message}
        </Notice>
      )}
      {result && (
        <>
          <p className="muted small" data-testid="replay-summary">
            {result.nodes.join(', ') || 'no nodes'} · {result.links} link{result.links === 1 ? '' : 's'} ·{' '}
            {result.events} simulated events · changed:{' '}
            <span data-testid="replay-changed">
              {ranWith.length ? ranWith.join(', ') : 'nothing (recorded settings)'}
            </span>
          </p>
          <table className="data-table compact" data-testid="replay-table">
            <thead>
              <tr>
                <th scope="col" />
                <th scope="col" className="num">
                  Recorded
                </th>
                <th scope="col" className="num">
                  Replayed
                </th>
                <th scope="col" className="num">
                  Replayed / recorded
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr key={r.key} data-testid="replay-row" data-key={r.key} data-differs={r.differs}>
                  <th scope="row">{r.label}</th>
                  <td className="num" data-testid="replay-recorded">
                    {r.recorded}
                  </td>
                  <td className={`num${r.differs ? ' id-main' : ''}`} data-testid="replay-replayed">
                    {r.replayed}
                  </td>
                  <td className="num muted">{r.ratio}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {notes.map((n) => (
            <p key={n} className="muted small" data-testid="replay-note">
              {n}
            </p>
          ))}
        </>
      )}
    </div>
  );
}
