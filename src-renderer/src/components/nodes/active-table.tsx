import type { ActiveView } from '../../nodes/nodes-view';

/** Requests at a backend of one node, every model's (UI-2): model, lane, started, streamed, lent from. */
export function ActiveTable({ rows }: { rows: ActiveView[] }) {
  return (
    <table className="data-table compact" data-testid="active-requests">
      <thead>
        <tr>
          <th scope="col">Request</th>
          <th scope="col">Model</th>
          <th scope="col">Lane</th>
          <th scope="col">Started</th>
          <th scope="col" className="num">
            Age
          </th>
          <th scope="col">Stream</th>
          <th scope="col">Lent from</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={r.key} data-testid="active-requests-row" data-state="active" data-via={r.via} data-request-id={r.id}>
            <td className="mono" title={`${r.id} · via ${r.via}`}>
              {r.shortId}
            </td>
            <td className="nowrap" data-testid="active-model" title={r.modelTitle}>
              {r.model}
            </td>
            <td className="nowrap" data-testid="active-lane">
              {r.lane}
            </td>
            <td className="nowrap mono" data-testid="active-started" title={r.startedTitle}>
              {r.started}
            </td>
            <td className="num nowrap">{r.age}</td>
            <td className="nowrap" data-testid="active-stream">
              {r.streamed}
            </td>
            <td className="nowrap" data-testid="active-lent-from">
              {r.lentFrom}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
