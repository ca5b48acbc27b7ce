import { useReducer, useState } from 'react';
import type { SettingsView } from '../../../../src-router/contract';
import {
  configFromForm,
  type FieldGroup,
  fieldOfParam,
  formChanged,
  formFromConfig,
  formHints,
  generateClusterToken,
  ROLE_PATH,
  roleOptions,
  SETTINGS_FIELDS,
  SLAVE_URLS_PATH,
  settingsFormReducer,
  TOKEN_PATH,
} from '../../settings/settings-form';
import { useAppStore } from '../../store/use-app-store';
import { FieldMessage, SettingsFieldRow } from './settings-field';
import { SlaveUrlsEditor } from './slave-urls-editor';

const GROUPS: { id: FieldGroup; title: string; note: string }[] = [
  { id: 'node', title: 'This node', note: 'role, identity, where it listens, its models and keyspace' },
  {
    id: 'lending',
    title: 'Lending',
    note: 'how this node queues, prices and lends work (cluster.scheduling_*, cluster.offload_*)',
  },
];

/**
 * The node's config as a form: the config object the GET returned, edited field by field and PUT whole.
 * A 400 shows at the field its `param` names and the form keeps everything typed; ROLE-2's hint shows before sending.
 */
export function SettingsEditor({ view }: { view: SettingsView }) {
  const saveSettings = useAppStore((s) => s.saveSettings);
  const saving = useAppStore((s) => s.settings.saving);
  const [form, dispatch] = useReducer(settingsFormReducer, view, (v) => formFromConfig(v.config, v.schema));
  const [error, setError] = useState<{ field: string | null; message: string } | null>(null);
  const [unchanged, setUnchanged] = useState(false);
  const hints = formHints(form);
  const role = String(form.values[ROLE_PATH]);
  const errorAt = (path: string | null) => (error && error.field === path ? error.message : null);

  async function save() {
    setError(null);
    setUnchanged(false);
    const result = await saveSettings(configFromForm(form));
    if (!result.ok) setError({ field: fieldOfParam(result.failure.param), message: result.failure.message });
    else if (!result.value.written) setUnchanged(true);
  }

  return (
    <form
      className="settings-form"
      data-testid="settings-form"
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
    >
      {GROUPS.map((g) => (
        <div
          className="card settings-group"
          role="group"
          aria-labelledby={`settings-group-${g.id}-title`}
          key={g.id}
          data-testid={`settings-group-${g.id}`}
        >
          <div className="card-head">
            <h2 id={`settings-group-${g.id}-title`}>{g.title}</h2>
            <span className="muted small">{g.note}</span>
          </div>
          {SETTINGS_FIELDS.filter((f) => f.group === g.id).map((f) => (
            <div key={f.path}>
              <SettingsFieldRow
                field={f}
                schema={view.schema}
                value={form.values[f.path]}
                disabled={saving}
                error={errorAt(f.path)}
                hint={hints[f.path]}
                options={f.path === ROLE_PATH ? roleOptions(form) : undefined}
                onChange={(value) => dispatch({ type: 'field', path: f.path, value })}
                extra={
                  f.path === TOKEN_PATH ? (
                    <button
                      type="button"
                      disabled={saving}
                      onClick={() => dispatch({ type: 'field', path: TOKEN_PATH, value: generateClusterToken() })}
                      data-testid="settings-generate-token"
                    >
                      Generate
                    </button>
                  ) : undefined
                }
              />
              {f.path === TOKEN_PATH && (role === 'master' || form.slaveUrls.length > 0) && (
                <SlaveUrlsEditor
                  urls={form.slaveUrls}
                  disabled={saving}
                  error={errorAt(SLAVE_URLS_PATH)}
                  dispatch={dispatch}
                />
              )}
            </div>
          ))}
        </div>
      ))}
      <div className="control-row settings-actions">
        <button type="submit" className="primary" disabled={saving || !formChanged(form)} data-testid="settings-save">
          {saving ? 'Saving…' : 'Save and restart'}
        </button>
        <span className="muted small">
          writes <code data-testid="settings-path">{view.path}</code> (the previous file kept as <code>.bak</code>) and
          restarts the node on it
        </span>
      </div>
      <FieldMessage message={errorAt(null)} testId="settings-error" kind="error" />
      {unchanged && (
        <span className="muted small" role="status" data-testid="settings-unchanged">
          The config equals the file: nothing was written.
        </span>
      )}
    </form>
  );
}
