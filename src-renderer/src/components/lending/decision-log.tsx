import { useMemo, useState } from 'react';
import { foldDecisions } from '../../lending/decision-fold';
import { logCountLabel } from '../../lending/decision-view';
import { useAppStore } from '../../store/use-app-store';
import { Notice } from '../notice';
import { DecisionLine } from './decision-line';

/** The gathered decision log, folded (UI-1), newest first, with "load older" paging by cursor. */
export function DecisionLog() {
  const decisions = useAppStore((s) => s.decisions);
  const loadOlder = useAppStore((s) => s.loadOlderDecisions);
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set());
  const { rows, failure } = decisions;
  const lines = useMemo(() => (rows ? foldDecisions(rows) : null), [rows]);
  const toggle = (key: string) =>
    setOpen((prev) => {
      const next = new Set(prev);
      if (!next.delete(key)) next.add(key);
      return next;
    });

  return (
    <>
      {failure && (
        <Notice kind="error" testId="decisions-error">
          {failure.message}
          {rows && <span className="muted"> — showing the last rows read</span>}
        </Notice>
      )}
      {!rows && !failure && <p className="muted">Gathering the log from every node…</p>}
      {rows && lines && (
        <p className="muted small" data-testid="decisions-count">
          {logCountLabel(rows.length, lines.length, decisions.nextCursor !== null)}
        </p>
      )}
      {lines && lines.length === 0 && (
        <p className="muted empty" data-testid="decisions-empty">
          No decision matches: nothing was planned, dispatched or handed back
          {decisions.query ? ' with these filters' : ' yet'}.
        </p>
      )}
      {lines && lines.length > 0 && (
        <div className="table-scroll">
          <table className="data-table compact decision-table" data-testid="decision-table">
            <thead>
              <tr>
                <th scope="col">
                  <span className="visually-hidden">Expand</span>
                </th>
                <th scope="col">Time</th>
                <th scope="col" className="num">
                  Rows
                </th>
                <th scope="col">Node</th>
                <th scope="col">Kind</th>
                <th scope="col">Event</th>
                <th scope="col">Owner → helper</th>
                <th scope="col">Reason</th>
                <th scope="col" className="num">
                  Slots
                </th>
                <th scope="col">Variables</th>
              </tr>
            </thead>
            <tbody>
              {lines.map((f) => {
                const key = `${f.row.nodeId}:${f.row.id}`;
                return <DecisionLine key={key} folded={f} open={open.has(key)} onToggle={() => toggle(key)} />;
              })}
            </tbody>
          </table>
        </div>
      )}
      {decisions.nextCursor && (
        <div className="load-older">
          <button
            type="button"
            onClick={() => void loadOlder()}
            disabled={decisions.loadingOlder}
            data-testid="decisions-older"
          >
            {decisions.loadingOlder ? 'Loading…' : 'Load older'}
          </button>
        </div>
      )}
    </>
  );
}
