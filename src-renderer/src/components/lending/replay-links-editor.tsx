import { useEffect } from 'react';
import { linkChanges, recordedLinkRows, refLabel, replayModelOptions } from '../../lending/replay-links';
import { useAppStore } from '../../store/use-app-store';

/**
 * The Replay card's links: the recorded links (or the list as edited), each removable, and an owner → helper picker
 * from the models the cluster has. The rules (and the field-named refusals) are `lending/replay-links.ts`; nothing
 * here changes the cluster's links.
 */
export function ReplayLinksEditor() {
  const draft = useAppStore((s) => s.replay.draft);
  const failure = useAppStore((s) => s.replay.failure);
  const textLinks = useAppStore((s) => s.links.text.list);
  const imageLinks = useAppStore((s) => s.links.image.list);
  const linksFailure = useAppStore((s) => s.links.text.failure ?? s.links.image.failure);
  const models = useAppStore((s) => s.cluster.models);
  const fetchLinks = useAppStore((s) => s.fetchLinks);
  const setDraft = useAppStore((s) => s.setReplayDraft);
  const remove = useAppStore((s) => s.removeReplayLink);
  const add = useAppStore((s) => s.addReplayLink);
  const clear = useAppStore((s) => s.clearReplayLinks);
  const reset = useAppStore((s) => s.resetReplayLinks);
  useEffect(() => void fetchLinks(), [fetchLinks]);

  const recorded = textLinks && imageLinks ? recordedLinkRows({ text: textLinks, image: imageLinks }) : null;
  const rows = draft.links?.current ?? recorded;
  const options = replayModelOptions(models);
  const changes = linkChanges(draft.links);
  const ready = recorded !== null || draft.links !== null;

  return (
    <fieldset className="replay-links" data-testid="replay-links">
      <legend>
        Links{' '}
        <span className="muted small" data-testid="replay-links-state">
          {!ready
            ? linksFailure
              ? `the recorded links could not be read: ${linksFailure.message}`
              : 'reading…'
            : changes.length
              ? `changed: ${changes.join(', ')}`
              : 'as recorded'}
        </span>
      </legend>
      {rows && rows.length > 0 ? (
        <ul className="replay-link-list">
          {rows.map((l) => (
            <li key={l.key} data-testid="replay-link" data-key={l.key}>
              <span className="muted small">{l.lane}</span> {refLabel(l.owner)} → {refLabel(l.helper)}{' '}
              <button
                type="button"
                className="link-button"
                onClick={() => remove(l.key)}
                data-testid="replay-link-remove"
                aria-label={`remove ${refLabel(l.owner)} → ${refLabel(l.helper)}`}
              >
                remove
              </button>
            </li>
          ))}
        </ul>
      ) : (
        rows && (
          <p className="muted small" data-testid="replay-links-none">
            no links: nothing can be lent
          </p>
        )
      )}
      <div className="filters">
        <label className="filter">
          <span>Owner (lends)</span>
          <select
            value={draft.linkPick.owner}
            aria-invalid={failure?.param === 'links.owner'}
            onChange={(e) => setDraft({ linkPick: { owner: e.target.value } })}
            data-testid="replay-link-owner"
          >
            <option value="">pick a model</option>
            {options.map((o) => (
              <option key={o.value} value={o.value}>
                {o.label}
              </option>
            ))}
          </select>
        </label>
        <label className="filter">
          <span>Helper (borrows)</span>
          <select
            value={draft.linkPick.helper}
            aria-invalid={failure?.param === 'links.helper'}
            onChange={(e) => setDraft({ linkPick: { helper: e.target.value } })}
            data-testid="replay-link-helper"
          >
            <option value="">pick a model</option>
            {options.map((o) => (
              <option key={o.value} value={o.value}>
                {o.label}
              </option>
            ))}
          </select>
        </label>
        <div className="filter-actions">
          <button type="button" disabled={!ready} onClick={add} data-testid="replay-link-add">
            Add link
          </button>
          <button
            type="button"
            disabled={!ready || rows?.length === 0}
            onClick={clear}
            data-testid="replay-links-clear"
          >
            Remove all
          </button>
          <button type="button" disabled={draft.links === null} onClick={reset} data-testid="replay-links-reset">
            As recorded
          </button>
        </div>
      </div>
    </fieldset>
  );
}
