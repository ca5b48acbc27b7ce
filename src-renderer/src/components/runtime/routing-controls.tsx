import { useEffect, useReducer } from 'react';
import type { RoutingViewWire } from '../../../../src-router/contract';
import { canApply, canReset, draftReducer, initialDraft, planApply, profileControl } from '../../runtime/routing-draft';
import { profileInForce, requiredMetrics, requiresHint, writeAccess } from '../../runtime/routing-view';
import { useAppStore } from '../../store/use-app-store';

const MULTI = 'multi';

/**
 * Strategy picker, requires hint, weights, metric profile, Apply / Reset (ROUTE-2, 3, 5, 7, 8). Picking only
 * changes the local draft; Apply parses first and publishes `routesEngine` only when a profile was picked.
 */
export function RoutingControls({ view }: { view: RoutingViewWire }) {
  const applyRouting = useAppStore((s) => s.applyRouting);
  const applying = useAppStore((s) => s.routing.applying);
  const [draft, dispatch] = useReducer(draftReducer, view, initialDraft);
  // New server state (or a draft that became untouched): an untouched draft follows what is in force.
  useEffect(() => dispatch({ type: 'sync', view }), [view, draft.dirty]);

  const access = writeAccess(view);
  const disabled = !access.enabled;
  const hasMulti = view.strategies.some((s) => s.name === MULTI);
  const hint = draft.selected ? requiresHint(requiredMetrics(draft.selected, draft.multiSpec, view)) : null;
  const specInvalid = draft.error?.field === 'strategy' && draft.selected === MULTI;
  const inForce = profileInForce(view);
  const profile = profileControl(draft, view);

  async function apply() {
    const plan = planApply(draft, view);
    if (!plan.ok) return dispatch({ type: 'invalid', message: plan.message, field: plan.field });
    const result = await applyRouting(plan.request);
    if (result.ok) return dispatch({ type: 'applied' });
    const param = result.failure.param;
    const field =
      result.failure.status === 400 && (param === 'strategy' || param === 'routesEngine') ? param : 'request';
    dispatch({ type: 'invalid', message: result.failure.message, field });
  }

  return (
    <div className="routing-controls" data-testid="routing-controls">
      <div className="control-row">
        <span className="control-label" id="strategy-label">
          Strategy
        </span>
        <div className="segmented" role="group" aria-labelledby="strategy-label">
          {view.strategies.map((s) => (
            <button
              key={s.name}
              type="button"
              aria-pressed={draft.selected === s.name}
              disabled={disabled}
              onClick={() => dispatch({ type: 'select', name: s.name })}
              data-testid={`strategy-${s.name}`}
              title={s.name}
            >
              {s.label}
            </button>
          ))}
        </div>
      </div>
      {hint && (
        <p className={`requires-hint${hint.warn ? ' requires-warn' : ''}`} data-testid="requires-hint">
          {hint.text}
        </p>
      )}
      {hasMulti && (
        <div className="control-row">
          <label className="control-label" htmlFor="multi-spec">
            Weights
          </label>
          <input
            id="multi-spec"
            className="spec-input mono"
            type="text"
            spellCheck={false}
            value={draft.multiSpec}
            disabled={disabled}
            aria-invalid={specInvalid}
            aria-describedby={specInvalid ? 'routing-apply-error' : undefined}
            onChange={(e) => {
              if (draft.selected !== MULTI) dispatch({ type: 'select', name: MULTI });
              dispatch({ type: 'multi-spec', text: e.target.value });
            }}
            data-testid="multi-spec"
          />
          <span className="muted small">name:weight pairs, for {view.multiScorers.join(', ')}</span>
        </div>
      )}
      <div className="control-row">
        <label
          className="control-label"
          htmlFor="metric-profile"
          title="Metric profile (static routes): which engine's /metrics names are parsed for pods in the static route table"
        >
          Metric profile
        </label>
        <select
          id="metric-profile"
          value={profile.value}
          disabled={disabled}
          onChange={(e) => dispatch({ type: 'profile', profile: e.target.value === '' ? null : e.target.value })}
          data-testid="metric-profile"
        >
          {(['in force', 'set'] as const).map((group) => (
            <optgroup key={group} label={group}>
              {profile.options
                .filter((o) => o.group === group)
                .map((o) => (
                  <option key={`${group}:${o.value}`} value={o.value}>
                    {o.label}
                  </option>
                ))}
            </optgroup>
          ))}
        </select>
        <span className="muted small">
          static routes · in force: <span data-testid="metric-profile-in-force">{inForce}</span>
        </span>
      </div>
      {draft.error && (
        <p className="error-text apply-error" id="routing-apply-error" role="alert" data-testid="routing-apply-error">
          {draft.error.message}
        </p>
      )}
      <div className="control-row actions">
        <span title={access.tooltip ?? undefined} data-testid="routing-apply-wrap">
          <button
            type="button"
            className="primary"
            disabled={!canApply(draft, view) || applying}
            onClick={() => void apply()}
            title={access.tooltip ?? undefined}
            data-testid="routing-apply"
          >
            {applying ? 'Applying…' : 'Apply strategy'}
          </button>
        </span>
        <button
          type="button"
          disabled={disabled || !canReset(draft)}
          onClick={() => dispatch({ type: 'reset', view })}
          data-testid="routing-reset"
        >
          Reset
        </button>
        <span className="muted small">
          Takes effect on the module&apos;s next poll (~5 s). No restart; requests in flight are not re-routed.
        </span>
      </div>
    </div>
  );
}
