import { useReducer, useState } from 'react';
import type { GuardianScope, GuardiansView } from '../../../../src-router/contract';
import {
  candidateOptions,
  effectiveGuardianRows,
  errorField,
  fieldError,
  guardianDraftReducer,
  guardianSettingRows,
  initialGuardianDraft,
  modelTargetOptions,
  NO_CANDIDATES,
  NO_TEXT_ONLY,
  planGuardianPut,
} from '../../lending/guardians-view';
import { useAppStore } from '../../store/use-app-store';

const SCOPES: { value: GuardianScope; label: string }[] = [
  { value: 'cluster', label: 'Cluster default' },
  { value: 'node', label: 'Per node' },
  { value: 'model', label: 'Per model' },
];

function FieldError({ message, testId }: { message: string | null; testId: string }) {
  return message ? (
    <span className="error-text small" role="alert" data-testid={testId}>
      {message}
    </span>
  ) : null;
}

/**
 * Guardian models (UI-4, GUARD-1): the settings (cluster default, per node, per model) set, changed and removed; the
 * effective guardian of every text-only model and the setting it came from; a picker offering only the candidates;
 * the node's refusals shown under the field it named.
 */
export function GuardiansCard({ view }: { view: GuardiansView }) {
  const setGuardian = useAppStore((s) => s.setGuardian);
  const removeGuardian = useAppStore((s) => s.removeGuardian);
  const writing = useAppStore((s) => s.guardians.writing);
  const [draft, dispatch] = useReducer(guardianDraftReducer, null, initialGuardianDraft);
  const [removeError, setRemoveError] = useState<string | null>(null);
  const settings = guardianSettingRows(view);
  const effective = effectiveGuardianRows(view);
  const candidates = candidateOptions(view);
  const targets = modelTargetOptions(view);

  async function save() {
    const plan = planGuardianPut(draft);
    if (!plan.ok) return dispatch({ type: 'save-failed', field: plan.field, message: plan.message });
    dispatch({ type: 'save-start' });
    const result = await setGuardian(plan.body);
    if (result.ok) dispatch({ type: 'saved' });
    else dispatch({ type: 'save-failed', field: errorField(result.failure.param), message: result.failure.message });
  }
  async function remove(body: (typeof settings)[number]['remove']) {
    setRemoveError(null);
    const result = await removeGuardian(body);
    if (!result.ok) setRemoveError(result.failure.message);
  }

  return (
    <div className="card guardians-card" data-testid="guardians-card">
      <div className="card-head">
        <h2>Guardians</h2>
        <span className="muted small">
          multimodal models that answer image requests for text-only models; the most specific setting wins
        </span>
        <span className="spacer" />
        <span className="muted small" data-testid="guardians-version">
          version {view.version}
        </span>
      </div>

      <h3>Settings</h3>
      {removeError && (
        <p className="error-text small" role="alert" data-testid="guardian-remove-error">
          {removeError}
        </p>
      )}
      {settings.length === 0 ? (
        <p className="muted small" data-testid="guardian-settings-empty">
          No guardian is set: image requests to text-only models are refused.
        </p>
      ) : (
        <table className="data-table compact" data-testid="guardian-settings">
          <thead>
            <tr>
              <th scope="col">For</th>
              <th scope="col">Guardian</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {settings.map((s) => (
              <tr key={s.key} data-testid="guardian-setting-row" data-scope={s.scope}>
                <td className="nowrap">{s.target}</td>
                <td>
                  {s.guardian}
                  {s.missing && <span className="pill pill-bad"> not in the catalog</span>}
                </td>
                <td className="nowrap">
                  <button
                    type="button"
                    onClick={() => dispatch({ type: 'edit', setting: s.setting })}
                    data-testid="guardian-change"
                  >
                    Change
                  </button>{' '}
                  <button
                    type="button"
                    disabled={writing}
                    onClick={() => void remove(s.remove)}
                    data-testid="guardian-remove"
                  >
                    Remove
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}

      <h3>Effective guardian of each text-only model</h3>
      {effective.length === 0 ? (
        <p className="muted small">{NO_TEXT_ONLY}</p>
      ) : (
        <table className="data-table compact" data-testid="guardian-effective">
          <thead>
            <tr>
              <th scope="col">Model</th>
              <th scope="col">Node</th>
              <th scope="col">Guardian</th>
              <th scope="col">From</th>
            </tr>
          </thead>
          <tbody>
            {effective.map((e) => (
              <tr key={e.key} data-testid="guardian-effective-row" data-key={e.key}>
                <td className="nowrap id-main">{e.model}</td>
                <td className="nowrap">{e.node}</td>
                <td data-testid="guardian-effective-guardian">{e.guardian}</td>
                <td>
                  <span className={`pill pill-${e.tone}`} data-testid="guardian-effective-from">
                    {e.from}
                  </span>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}

      <h3>Set a guardian</h3>
      <div className="guardian-form" data-testid="guardian-form">
        <div className="control-row">
          <label className="control-label" htmlFor="guardian-scope">
            For
          </label>
          <select
            id="guardian-scope"
            value={draft.scope}
            onChange={(e) => dispatch({ type: 'field', field: 'scope', value: e.target.value })}
            data-testid="guardian-scope"
          >
            {SCOPES.map((s) => (
              <option key={s.value} value={s.value}>
                {s.label}
              </option>
            ))}
          </select>
          {draft.scope === 'node' && (
            <>
              <select
                aria-label="node"
                value={draft.node}
                onChange={(e) => dispatch({ type: 'field', field: 'node', value: e.target.value })}
                data-testid="guardian-node"
              >
                <option value="">choose a node…</option>
                {view.nodes.map((n) => (
                  <option key={n} value={n}>
                    {n}
                  </option>
                ))}
              </select>
              <FieldError message={fieldError(draft, 'node_id')} testId="guardian-error-node_id" />
            </>
          )}
          {draft.scope === 'model' && (
            <>
              <select
                aria-label="model"
                value={draft.target}
                onChange={(e) => dispatch({ type: 'field', field: 'target', value: e.target.value })}
                data-testid="guardian-target"
              >
                <option value="">choose a text-only model…</option>
                {targets.map((t) => (
                  <option key={t.key} value={t.key}>
                    {t.label}
                  </option>
                ))}
              </select>
              <FieldError
                message={fieldError(draft, 'model') ?? fieldError(draft, 'node_id')}
                testId="guardian-error-model"
              />
            </>
          )}
        </div>
        <div className="control-row">
          <label className="control-label" htmlFor="guardian-pick">
            Guardian
          </label>
          <select
            id="guardian-pick"
            value={draft.guardian}
            onChange={(e) => dispatch({ type: 'field', field: 'guardian', value: e.target.value })}
            data-testid="guardian-pick"
          >
            <option value="">choose a multimodal model…</option>
            {candidates.map((c) => (
              <option key={c.key} value={c.key}>
                {c.label}
              </option>
            ))}
          </select>
          {candidates.length === 0 && <span className="muted small">{NO_CANDIDATES}</span>}
          <FieldError message={fieldError(draft, 'guardian')} testId="guardian-error-guardian" />
        </div>
        <FieldError message={fieldError(draft, null) ?? fieldError(draft, 'scope')} testId="guardian-error" />
        <div className="control-row actions">
          <button
            type="button"
            className="primary"
            disabled={draft.phase === 'saving' || writing}
            onClick={() => void save()}
            data-testid="guardian-save"
          >
            {draft.phase === 'saving' ? 'Saving…' : 'Save guardian'}
          </button>
          {draft.phase === 'saved' && (
            <span className="muted small" role="status" data-testid="guardian-saved">
              Saved. The master pushes it to every node.
            </span>
          )}
        </div>
      </div>
    </div>
  );
}
