import { MARK_HINT, type RequestView } from '../../nodes/nodes-view';

/** Held requests of one node, marked queued / held / lent (UI-2); the ones at a backend are in `ActiveTable`. */
export function RequestTable({ rows, testId }: { rows: RequestView[]; testId: string }) {
  return (
    <table className="data-table compact" data-testid={testId}>
      <thead>
        <tr>
          <th scope="col">Request</th>
          <th scope="col">Model</th>
          <th scope="col">Marked</th>
          <th scope="col">First arrival</th>
          <th scope="col" className="num">
            Age
          </th>
          <th scope="col" className="num">
            Position
          </th>
          <th scope="col">Starts</th>
          <th scope="col">Finishes</th>
          <th scope="col">Helper</th>
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
            <td>
              <span
                className={`pill pill-${r.tone}`}
                data-testid="request-mark"
                title={r.state === 'active' ? undefined : MARK_HINT[r.state]}
              >
                {r.state}
              </span>
            </td>
            <td className="nowrap mono" data-testid="request-first-arrival" title={r.firstArrivalTitle}>
              {r.firstArrival}
            </td>
            <td className="num nowrap">{r.age}</td>
            <td className="num" data-testid="request-position">
              {r.position}
            </td>
            <td className="nowrap" data-testid="request-predicted-start" title={r.predictedStartTitle}>
              {r.predictedStart}
            </td>
            <td className="nowrap" data-testid="request-predicted-finish" title={r.predictedFinishTitle}>
              {r.predictedFinish}
            </td>
            <td className="nowrap mono" data-testid="request-helper">
              {r.helper}
            </td>
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
