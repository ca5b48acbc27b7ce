import { type FormEvent, useEffect, useRef, useState } from 'react';
import type { ModelFileInspection } from '../../../../src-router/contract';
import { configStem, type ModelConfigEntry } from '../../api/model-config-wire';
import { formatContextSize } from '../../format';
import {
  backendOptions,
  configFromDraft,
  draftErrors,
  draftFromConfig,
  draftWithInspection,
  emptyDraft,
  FORM_CAPABILITIES,
  fieldOfParam,
  type ModelDraft,
  type ModelField,
  nameAdvice,
  projectorNote,
} from '../../models/model-form';
import { useAppStore } from '../../store/use-app-store';
import { ModelFileField } from './model-file-field';

type Errors = Partial<Record<ModelField, string>> & { form?: string };

/**
 * Adds a model to this node's models folder, or changes one (`editing`: its config file): the model file (typed,
 * browsed or chosen natively), its backend (engine discovery), a public name (with what it does in the registry),
 * context size, parallel slots and capabilities read from the GGUF header. The node validates the config as start-up
 * does; a 400 shows at the field it names and nothing is written.
 */
export function ModelDialog({
  onClose,
  editing,
  native,
}: {
  onClose(): void;
  editing?: ModelConfigEntry;
  native: boolean;
}) {
  const engines = useAppStore((s) => s.engines);
  const fetchEngines = useAppStore((s) => s.fetchEngines);
  const localModels = useAppStore((s) => s.models.items);
  const catalog = useAppStore((s) => s.cluster.models);
  const nodeId = useAppStore((s) => s.connection.node?.nodeId ?? null);
  const inspectModelFile = useAppStore((s) => s.inspectModelFile);
  const createModelConfig = useAppStore((s) => s.createModelConfig);
  const replaceModelConfig = useAppStore((s) => s.replaceModelConfig);
  const base = editing?.config ?? {};
  const [draft, setDraft] = useState<ModelDraft>(() =>
    editing?.config ? draftFromConfig(editing.config) : emptyDraft(),
  );
  const [inspection, setInspection] = useState<ModelFileInspection | null>(null);
  const [inspecting, setInspecting] = useState(false);
  /** Why the header of the chosen file was not read (outside the folders the node may browse), when it was not. */
  const [unread, setUnread] = useState<string | null>(null);
  const [errors, setErrors] = useState<Errors>({});
  const [saving, setSaving] = useState(false);
  const inspected = useRef<string | null>(null);
  const originalName = typeof base.name === 'string' ? base.name : null;

  useEffect(() => {
    void fetchEngines();
  }, [fetchEngines]);

  async function inspect(path: string, current: ModelDraft) {
    if (inspected.current === path) return;
    inspected.current = path;
    setInspecting(true);
    const result = await inspectModelFile(path);
    setInspecting(false);
    if (inspected.current !== path) return;
    if (!result.ok) {
      setInspection(null);
      // A file outside the folders the node may browse can still be served: its header is just not read.
      if (result.failure.code === 'outside_model_folders') {
        setUnread(result.failure.message);
        setErrors((e) => ({ ...e, path: undefined }));
      } else {
        setUnread(null);
        setErrors((e) => ({ ...e, path: result.failure.message }));
      }
      return;
    }
    setUnread(null);
    setInspection(result.value);
    setErrors((e) => ({
      ...e,
      path: result.value.capabilities.length
        ? undefined
        : 'this is a vision projector (mmproj), not a model: choose the model file beside it',
    }));
    // Editing keeps the stored name and capabilities unless the file changed.
    setDraft((d) =>
      editing?.config && path === draftFromConfig(editing.config).path
        ? { ...d, path }
        : draftWithInspection(d, result.value, current.path),
    );
  }

  const pick = (path: string) => {
    const next = { ...draft, path };
    setDraft(next);
    void inspect(path, draft);
  };

  useEffect(() => {
    // Editing: what the stored file says (its trained context, a projector beside it).
    if (editing?.config && draft.path) void inspect(draft.path, draft);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  const set = (field: keyof ModelDraft, value: string | string[]) => {
    setDraft((d) => ({ ...d, [field]: value }));
    setErrors((e) => ({ ...e, [field]: undefined, form: undefined }));
  };

  async function submit(e: FormEvent) {
    e.preventDefault();
    const local = draftErrors(draft);
    if (Object.keys(local).length) return setErrors(local);
    setSaving(true);
    const config = configFromDraft(draft, base);
    const result = editing
      ? await replaceModelConfig(configStem(editing.file), config)
      : await createModelConfig(config);
    setSaving(false);
    if (result.ok) return onClose();
    const field = fieldOfParam(result.failure.param);
    setErrors(field ? { [field]: result.failure.message } : { form: result.failure.message });
  }

  const advice = nameAdvice({ name: draft.name, editing: originalName, localModels, catalog, nodeId });
  const options = backendOptions(engines.value?.engines ?? null, draft.backend);
  const missing = options.filter((o) => o.note);
  const projector = projectorNote(
    draft,
    inspection?.vision_projector ?? null,
    typeof base.command === 'string' && base.command !== '',
  );

  return (
    <div className="dialog-backdrop">
      <form
        className="dialog card model-dialog"
        role="dialog"
        aria-modal="true"
        aria-labelledby="model-dialog-title"
        data-testid="model-dialog"
        onSubmit={(e) => void submit(e)}
        noValidate
      >
        <h2 id="model-dialog-title">{editing ? `Edit ${configStem(editing.file)}` : 'Add a model'}</h2>
        <p className="muted small">
          {editing ? (
            <>
              Rewrites <code>{editing.file}</code>;{' '}
            </>
          ) : (
            'Writes a model config into this node’s models folder; '
          )}
          the node takes it in without a restart (a running model switches when it is idle).
        </p>

        <ModelFileField
          value={draft.path}
          error={errors.path ?? null}
          native={native}
          onChange={(v) => set('path', v)}
          onPick={pick}
        />
        {inspecting && (
          <span className="muted small" data-testid="model-inspecting">
            Reading the GGUF header…
          </span>
        )}
        {unread && (
          <span className="warn-text small" role="status" data-testid="model-path-note">
            The header was not read, so set the capabilities yourself: {unread}
          </span>
        )}
        {inspection && (
          <p className="muted small" data-testid="model-inspection">
            {[
              inspection.architecture && `architecture ${inspection.architecture}`,
              inspection.name,
              inspection.context_length && `trained context ${formatContextSize(inspection.context_length)}`,
              inspection.embedding && 'an embedding model',
            ]
              .filter(Boolean)
              .join(' · ')}
            {inspection.vision_projector && inspection.capabilities.length > 0 && (
              <>
                {' '}
                · vision projector <code>{inspection.vision_projector.split(/[\\/]/).pop()}</code>
              </>
            )}
          </p>
        )}

        <label className="dialog-field">
          <span>Backend</span>
          <select
            value={draft.backend}
            aria-invalid={errors.backend ? true : undefined}
            data-testid="model-backend-select"
            onChange={(e) => set('backend', e.target.value)}
          >
            {options.map((o) => (
              <option key={o.value} value={o.value} disabled={o.disabled} title={o.note || undefined}>
                {o.label}
              </option>
            ))}
          </select>
          {errors.backend && (
            <span className="error-text small" role="alert" data-testid="model-backend-error">
              {errors.backend}
            </span>
          )}
          {engines.failure && <span className="muted small">Engine discovery: {engines.failure.message}</span>}
          {missing.length > 0 && (
            <ul className="muted small" data-testid="model-backend-missing">
              {missing.map((o) => (
                <li key={o.value}>
                  <strong>{o.value}</strong>: {o.note}
                </li>
              ))}
            </ul>
          )}
        </label>

        <label className="dialog-field">
          <span>Public name</span>
          <input
            type="text"
            spellCheck={false}
            value={draft.name}
            placeholder="what clients send as model"
            aria-invalid={errors.name ? true : undefined}
            data-testid="model-name"
            onChange={(e) => set('name', e.target.value)}
          />
          {errors.name ? (
            <span className="error-text small" role="alert" data-testid="model-name-error">
              {errors.name}
            </span>
          ) : (
            advice.message && (
              <span
                className={`small ${advice.kind === 'new' || advice.kind === 'same' ? 'muted' : 'warn-text'}`}
                data-testid="model-name-advice"
                data-kind={advice.kind}
              >
                {advice.message}
              </span>
            )
          )}
        </label>

        <div className="dialog-pair">
          <label className="dialog-field">
            <span>Context size</span>
            <input
              type="number"
              min={1}
              value={draft.contextsize}
              placeholder={
                inspection?.context_length ? `engine default (trained ${inspection.context_length})` : 'engine default'
              }
              aria-invalid={errors.contextsize ? true : undefined}
              data-testid="model-contextsize"
              onChange={(e) => set('contextsize', e.target.value)}
            />
            {errors.contextsize && (
              <span className="error-text small" role="alert" data-testid="model-contextsize-error">
                {errors.contextsize}
              </span>
            )}
          </label>
          <label className="dialog-field">
            <span>Parallel slots</span>
            <input
              type="number"
              min={1}
              value={draft.parallel}
              placeholder="engine default"
              aria-invalid={errors.parallel ? true : undefined}
              data-testid="model-parallel"
              onChange={(e) => set('parallel', e.target.value)}
            />
            {errors.parallel && (
              <span className="error-text small" role="alert" data-testid="model-parallel-error">
                {errors.parallel}
              </span>
            )}
          </label>
        </div>

        <fieldset className="dialog-field" style={{ border: 0, padding: 0, margin: 0 }}>
          <legend className="small">Capabilities</legend>
          <div className="capability-choices">
            {FORM_CAPABILITIES.map((c) => (
              <label key={c} className="small">
                <input
                  type="checkbox"
                  checked={draft.capabilities.includes(c)}
                  data-testid={`model-capability-${c}`}
                  onChange={(e) =>
                    set(
                      'capabilities',
                      e.target.checked ? [...draft.capabilities, c] : draft.capabilities.filter((x) => x !== c),
                    )
                  }
                />{' '}
                {c}
              </label>
            ))}
          </div>
          {errors.capabilities && (
            <span className="error-text small" role="alert" data-testid="model-capabilities-error">
              {errors.capabilities}
            </span>
          )}
          {projector && (
            <span className="warn-text small" data-testid="model-projector-note">
              {projector}
            </span>
          )}
        </fieldset>

        {errors.form && (
          <p className="error-text small" role="alert" data-testid="model-dialog-error">
            {errors.form}
          </p>
        )}
        <div className="dialog-buttons">
          <button type="button" onClick={onClose} data-testid="model-dialog-cancel">
            Cancel
          </button>
          <button type="submit" className="primary" disabled={saving} data-testid="model-dialog-submit">
            {saving ? 'Saving…' : editing ? 'Save' : 'Add model'}
          </button>
        </div>
      </form>
    </div>
  );
}
