import { type SettingsFormAction, SLAVE_URLS_PATH } from '../../settings/settings-form';
import { FieldMessage } from './settings-field';

/** `cluster.slave_urls`: the slaves a master polls and accepts (ROLE-4), one URL a row. */
export function SlaveUrlsEditor({
  urls,
  disabled,
  error,
  dispatch,
}: {
  urls: string[];
  disabled: boolean;
  error: string | null;
  dispatch(a: SettingsFormAction): void;
}) {
  return (
    <div className="settings-field" data-path={SLAVE_URLS_PATH}>
      <div className="control-row align-top">
        <span className="control-label">Slave URLs</span>
        <div className="slave-urls grow" data-testid="settings-slave-urls">
          {urls.length === 0 && (
            <p className="muted small">No slaves: a master without slaves routes to itself only.</p>
          )}
          {urls.map((url, i) => (
            <div className="control-row" key={i}>
              <input
                className="spec-input"
                type="url"
                spellCheck={false}
                aria-label={`slave URL ${i + 1}`}
                placeholder="http://gpu-box:8080"
                value={url}
                disabled={disabled}
                onChange={(e) => dispatch({ type: 'slave-set', index: i, value: e.target.value })}
                data-testid="settings-slave-url"
                aria-invalid={error ? true : undefined}
              />
              <button
                type="button"
                className="danger"
                disabled={disabled}
                onClick={() => dispatch({ type: 'slave-remove', index: i })}
                data-testid="settings-slave-remove"
              >
                Remove
              </button>
            </div>
          ))}
          <div>
            <button
              type="button"
              disabled={disabled}
              onClick={() => dispatch({ type: 'slave-add' })}
              data-testid="settings-slave-add"
            >
              Add a slave
            </button>
          </div>
        </div>
      </div>
      <div className="settings-notes">
        <span className="muted small">the master polls these URLs and accepts registrations only from them</span>
        <FieldMessage message={error} testId={`settings-error-${SLAVE_URLS_PATH}`} kind="error" />
      </div>
    </div>
  );
}
