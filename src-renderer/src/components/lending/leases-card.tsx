import type { LendingViewWire } from '../../../../src-router/contract';
import { decisionsMadeLabel, leaseRows, NO_LEASES } from '../../lending/lending-view';

/** Live leases (UI-1): who lends to whom right now, with how many slots and on what speeds. */
export function LeasesCard({ view }: { view: LendingViewWire }) {
  const rows = leaseRows(view.leases);
  return (
    <div className="card" data-testid="leases-card">
      <div className="card-head">
        <h2>Live leases</h2>
        <span className="count" data-testid="leases-count">
          {rows.length}
        </span>
        <span className="spacer" />
        <span className="muted small" data-testid="decisions-made">
          {decisionsMadeLabel(view.decisionsMade)}
        </span>
      </div>
      {rows.length === 0 ? (
        <p className="muted empty" data-testid="leases-empty">
          {NO_LEASES}
        </p>
      ) : (
        <table className="data-table compact" data-testid="leases-table">
          <thead>
            <tr>
              <th scope="col">Owner</th>
              <th scope="col">Helper</th>
              <th scope="col" className="num">
                Slots
              </th>
              <th scope="col">Basis</th>
              <th scope="col" className="num">
                TTL
              </th>
              <th scope="col" className="num">
                Owner / job
              </th>
              <th scope="col" className="num">
                Helper / job
              </th>
              <th scope="col" className="num">
                Switch
              </th>
              <th scope="col" className="num">
                Helper context
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((l) => (
              <tr key={l.key} data-testid="lease-row" title={`link ${l.linkId}`}>
                <td className="nowrap">{l.owner}</td>
                <td className="nowrap">{l.helper}</td>
                <td className="num">{l.slots}</td>
                <td>
                  <span className={`pill pill-${l.tone}`}>{l.basis}</span>
                </td>
                <td className="num">{l.ttl}</td>
                <td className="num">{l.ownerJob}</td>
                <td className="num">{l.helperJob}</td>
                <td className="num">{l.helperSwitch}</td>
                <td className="num">{l.helperContext}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
