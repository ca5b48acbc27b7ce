import type { RoutingViewWire } from '../../../../src-router/contract';
import { notReportingExplanation, stateRows } from '../../runtime/routing-view';

/** Requested vs in force, never conflated (ROUTE-6); without a beacon, why nothing is confirmed. */
export function RoutingStateRows({ view }: { view: RoutingViewWire }) {
  return (
    <>
      <dl className="routing-state" data-testid="routing-state">
        {stateRows(view).map((r) => (
          <div key={r.key} data-testid={`routing-${r.key}`}>
            <dt>{r.label}</dt>
            <dd className={r.mono ? 'mono' : undefined} data-testid={`routing-${r.key}-value`}>
              {r.value}
            </dd>
          </div>
        ))}
      </dl>
      {!view.keyspaceReachable && (
        <p className="notice notice-error" data-testid="routing-keyspace">
          The keyspace could not be read: requested and in-force state are unknown right now.
        </p>
      )}
      {view.keyspaceReachable && !view.engineReporting && (
        <p className="notice" data-testid="routing-not-reporting">
          {notReportingExplanation(view.routingKey)}
        </p>
      )}
      {view.effective?.source === 'fallback_invalid_spec' && view.status.invalidReason && (
        <p className="notice" data-testid="routing-invalid-desired">
          The requested state was not applied: {view.status.invalidReason}
        </p>
      )}
    </>
  );
}
