import { useEffect } from 'react';
import { NO_STRATEGIES_DETAIL, NO_STRATEGIES_MESSAGE, syncPill, writeAccess } from '../../runtime/routing-view';
import { startPolling } from '../../store/polling';
import { useAppStore } from '../../store/use-app-store';
import { Notice } from '../notice';
import { ProfileNotes } from './profile-notes';
import { RoutingControls } from './routing-controls';
import { RoutingStateRows } from './routing-state';
import { UpstreamsTable } from './upstreams-table';

/** While the engine has not picked up what was requested, re-read a little faster than the page does. */
const PENDING_POLL_MS = 1_000;

/**
 * The Routing card (ROUTE-1..9): desired and effective state, the controls, routed upstreams. It reads
 * `runtime.routing`, not the runtime blob, so it stays when nothing is published. No restart button (ROUTE-8).
 */
export function RoutingCard() {
  const routing = useAppStore((s) => s.routing);
  const fetchRouting = useAppStore((s) => s.fetchRouting);
  const { view, failure } = routing;
  const pending = view !== null && syncPill(view).state === 'pending';
  useEffect(() => (pending ? startPolling(fetchRouting, PENDING_POLL_MS) : undefined), [pending, fetchRouting]);

  const access = view ? writeAccess(view) : null;
  const pill = view ? syncPill(view) : null;
  const empty = view !== null && view.strategies.length === 0;

  return (
    <div className="card routing-card" data-testid="routing-card">
      <div className="card-head">
        <h2>Routing</h2>
        {pill && (
          <span className={`pill pill-${pill.tone}`} data-testid="routing-pill" data-state={pill.state}>
            {pill.label}
          </span>
        )}
        <span className="spacer" />
        {access?.banner && (
          <span className="readonly-badge" data-testid="routing-readonly" title={access.tooltip ?? undefined}>
            {access.banner}
          </span>
        )}
        {access?.gate && (
          <span className="muted small" data-testid="routing-readonly-gate">
            gate: <code>{access.gate}</code>
          </span>
        )}
      </div>
      {failure && view && (
        <Notice kind="error" testId="routing-error">
          {failure.message}
          <span className="muted"> — showing the last state read</span>
        </Notice>
      )}
      {!view && !failure && <p className="muted">Reading routing state…</p>}
      {(empty || (!view && failure)) && (
        <div className="empty-state" data-testid="routing-empty">
          <p>{NO_STRATEGIES_MESSAGE}</p>
          <p className="muted small">{failure && !view ? failure.message : NO_STRATEGIES_DETAIL}</p>
          <button type="button" onClick={() => void fetchRouting()} data-testid="routing-retry">
            Retry
          </button>
        </div>
      )}
      {view && (
        <>
          <RoutingStateRows view={view} />
          {!empty && <RoutingControls view={view} />}
          {!empty && <ProfileNotes view={view} />}
          <UpstreamsTable rows={routing.upstreams} failure={routing.upstreamsFailure} />
        </>
      )}
    </div>
  );
}
