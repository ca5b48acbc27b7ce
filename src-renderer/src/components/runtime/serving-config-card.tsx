import type { ServingConfig } from '../../../../src-router/contract';
import { NO_SERVING_CONFIG, servingConfigRows } from '../../runtime/runtime-view';

/** Serving config (RT-5): only the rows the blob carries; the console fills in none. */
export function ServingConfigCard({ config }: { config: ServingConfig | undefined }) {
  const rows = servingConfigRows(config);
  return (
    <div className="card" data-testid="serving-config">
      <div className="card-head">
        <h2>Serving config</h2>
      </div>
      {rows.length === 0 ? (
        <p className="muted empty" data-testid="serving-config-empty">
          {NO_SERVING_CONFIG}
        </p>
      ) : (
        <dl className="kv-list">
          {rows.map((r) => (
            <div key={r.key} data-testid={`serving-${r.key}`}>
              <dt>{r.label}</dt>
              <dd data-testid={`serving-${r.key}-value`}>{r.value}</dd>
            </div>
          ))}
        </dl>
      )}
    </div>
  );
}
