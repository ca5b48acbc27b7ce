import type { ClusterNodeView } from '../../../../src-router/contract';
import { slaveRows } from '../../settings/slaves-view';

/** A master's slaves with their health, as soon as it polled them (the Nodes screen shows the rest). */
export function SlavesCard({ nodes, slaveUrls }: { nodes: ClusterNodeView[] | null; slaveUrls: string[] }) {
  const rows = slaveRows(nodes, slaveUrls);
  return (
    <div className="card" data-testid="settings-slaves">
      <div className="card-head">
        <h2>Slaves</h2>
        <span className="muted small">as this master polls them</span>
        <span className="spacer" />
        <a href="#nodes" data-testid="settings-nodes-link">
          Nodes screen
        </a>
      </div>
      {rows.length === 0 ? (
        <p className="muted small">No slave configured.</p>
      ) : (
        <table className="data-table compact">
          <thead>
            <tr>
              <th scope="col">Node</th>
              <th scope="col">URL</th>
              <th scope="col">Health</th>
              <th scope="col">Last error</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.key} data-testid="settings-slave-row" data-url={r.url}>
                <td className="id-main">{r.nodeId}</td>
                <td className="mono">{r.url}</td>
                <td>
                  <span className={`pill pill-${r.tone}`} data-testid="settings-slave-health">
                    {r.health}
                  </span>
                </td>
                <td className={r.lastError ? 'error-text' : 'muted'}>{r.lastError ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
