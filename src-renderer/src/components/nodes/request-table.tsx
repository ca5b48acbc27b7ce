import { MARK_HINT, type RequestView } from '../../nodes/nodes-view';

/** Requests of one node: held ones marked queued / held / lent, or the ones at a backend (UI-2). */
export function RequestTable({ rows, testId, kind }: { rows: RequestView[]; testId: string; kind: 'active' | 'held' }) {
  return (
    <table className="data-table compact" data-testid={testId}>
      <thead>
        <tr>
          <th scope="col">Request</th>
          <th scope="col">Model</th>
          {kind === 'held' && <th scope="col">Marked</th>}
          <th scope="col">First arrival</th>
          <th scope="col" className="num">
            Age
          </th>
          <th scope="col">Notes</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={r.key} data-testid={`${testId}-row`} data-state={r.state} data-request-id={r.id}>
            <td className="mono" title={r.id}>
              {r.shortId}
            </td>
            <td className="nowrap">{r.model}</td>
            {kind === 'held' && (
              <td>
                <span className={`pill pill-${r.tone}`} data-testid="request-mark" title={r.state === 'active' ? undefined : MARK_HINT[r.state]}>
                  {r.state}
                </span>
              </td>
            )}
            <td className="nowrap mono" data-testid="request-first-arrival" title={r.firstArrivalTitle}>
              {r.firstArrival}
            </td>
            <td className="num nowrap">{r.age}</td>
            <td>
              {r.tags.map((t) => (
                <span key={t} className="tag">
                  {t}
                </span>
              ))}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
