import { DASH } from '../format';
import type { CatalogRow } from '../models/catalog-view';
import { StatePill } from './state-pill';

function Replicas({ row }: { row: CatalogRow }) {
  return (
    <ul className="replica-list">
      {row.replicas.map((r) => (
        <li
          key={`${r.nodeId}/${r.localId}`}
          data-testid="catalog-replica"
          data-node-id={r.nodeId}
          data-local-id={r.localId}
        >
          <span className="mono" data-testid="replica-node">
            {r.nodeId}
          </span>
          <span className="muted"> · </span>
          <span className="mono" data-testid="replica-local-id" title="local ID">
            {r.localId}
          </span>{' '}
          <span className={r.available ? 'pill pill-ok' : 'pill pill-bad'} data-testid="replica-available">
            {r.available ? 'available' : 'unavailable'}
          </span>{' '}
          <StatePill state={r.lane} testId="replica-lane" />
          {r.detail && (
            <span className="muted small" data-testid="replica-detail">
              {' '}
              {r.detail}
            </span>
          )}
        </li>
      ))}
    </ul>
  );
}

/** The merged cluster catalog (ID-2): every public ID, its replicas, suffixed conflicts, availability, lane state. */
export function ClusterCatalogTable({ rows }: { rows: CatalogRow[] }) {
  const withSource = rows.some((r) => r.source !== null);
  return (
    <table className="data-table" data-testid="catalog-table">
      <caption className="visually-hidden">Models of the cluster</caption>
      <thead>
        <tr>
          <th scope="col">Model</th>
          <th scope="col">Capabilities</th>
          {withSource && <th scope="col">Source</th>}
          <th scope="col">Replicas (node · local ID · availability · lane)</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.id} data-testid="catalog-row" data-model-id={row.id}>
            <td>
              <div className="id-main" data-testid="catalog-id">
                {row.id}
              </div>
              {row.suffixedFrom && (
                <div
                  className="id-sub"
                  data-testid="catalog-suffixed"
                  title="same public ID, different hashes: a stable suffix keeps them apart"
                >
                  conflict of {row.suffixedFrom}
                </div>
              )}
            </td>
            <td data-testid="catalog-capabilities">
              {row.capabilities.length
                ? row.capabilities.map((c) => (
                    <span key={c} className="tag">
                      {c}
                    </span>
                  ))
                : DASH}
            </td>
            {withSource && <td data-testid="catalog-source">{row.source ?? DASH}</td>}
            <td>
              <Replicas row={row} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
