import type { LendingViewWire } from '../../../../src-router/contract';
import { nodeBuildRows, settingRows } from '../../lending/lending-view';

/** Each node's build and whether it runs the master's settings (UI-1). */
export function NodeBuildsCard({ view }: { view: LendingViewWire }) {
  return (
    <div className="card" data-testid="node-builds">
      <div className="card-head">
        <h2>Builds and settings sync</h2>
      </div>
      <table className="data-table compact">
        <thead>
          <tr>
            <th scope="col">Node</th>
            <th scope="col">Build</th>
            <th scope="col">Settings hash</th>
            <th scope="col" title="the answering node (the master in a cluster) is the reference">
              Settings
            </th>
            <th scope="col">Health</th>
            <th scope="col" className="num" title="version of the links the node runs (LEASE-1)">
              Links v.
            </th>
            <th scope="col" className="num" title="version of the guardian settings the node runs (GUARD-1)">
              Guardians v.
            </th>
          </tr>
        </thead>
        <tbody>
          {nodeBuildRows(view.nodes).map((n) => (
            <tr key={n.nodeId} data-testid="node-build-row" data-node-id={n.nodeId}>
              <td className="nowrap id-main">{n.nodeId}</td>
              <td className="mono" data-testid="node-build-version">
                {n.build}
              </td>
              <td className="mono" title={n.settingsHashTitle}>
                {n.settingsHash}
              </td>
              <td>
                <span className={`pill pill-${n.sync.tone}`} data-testid="node-build-sync">
                  {n.sync.label}
                </span>
              </td>
              <td>
                <span className={`pill pill-${n.health.tone}`}>{n.health.label}</span>
              </td>
              <td className="num">{n.linksVersion}</td>
              <td className="num" data-testid="node-build-guardians">
                {n.guardiansVersion}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The lending settings in force on the answering node (`cluster.scheduling_*`, `cluster.offload_*`). */
export function SettingsCard({ view }: { view: LendingViewWire }) {
  const rows = settingRows(view.settings);
  return (
    <div className="card" data-testid="lending-settings">
      <div className="card-head">
        <h2>Settings</h2>
      </div>
      <dl className="kv-list">
        {rows.map((r) => (
          <div key={r.key} data-testid={`setting-${r.key}`} title={`${r.key}: ${r.raw}`}>
            <dt className="mono">{r.key}</dt>
            <dd>{r.value}</dd>
          </div>
        ))}
      </dl>
    </div>
  );
}
