import { useEffect, useState } from 'react';
import type { ConsoleModel } from '../../../../src-router/contract';
import { linkLine, linksUsing } from '../../models/model-form';
import { useAppStore } from '../../store/use-app-store';

/**
 * Confirms removing a model's config file, naming the links (both lanes) that use the model as owner or helper:
 * they stay stored, and their end names a model this node no longer has.
 */
export function RemoveModelDialog({
  model,
  configName,
  onClose,
}: {
  model: ConsoleModel;
  configName: string;
  onClose(): void;
}) {
  const fetchLinks = useAppStore((s) => s.fetchLinks);
  const links = useAppStore((s) => s.links);
  const deleteModelConfig = useAppStore((s) => s.deleteModelConfig);
  const [error, setError] = useState<string | null>(null);
  const [removing, setRemoving] = useState(false);

  useEffect(() => {
    void fetchLinks();
  }, [fetchLinks]);

  const read = links.text.list && links.image.list;
  const using = linksUsing(model, [...(links.text.list?.links ?? []), ...(links.image.list?.links ?? [])]);
  const linksFailure = links.text.failure ?? links.image.failure;

  async function remove() {
    setRemoving(true);
    const result = await deleteModelConfig(configName);
    setRemoving(false);
    if (result.ok) onClose();
    else setError(result.failure.message);
  }

  return (
    <div className="dialog-backdrop">
      <div
        className="dialog card"
        role="alertdialog"
        aria-modal="true"
        aria-labelledby="remove-model-title"
        data-testid="remove-model-dialog"
      >
        <h2 id="remove-model-title">Remove {model.localId}?</h2>
        <p className="small">
          Deletes its config file from the models folder. Requests running on it finish; new ones for{' '}
          <code>{model.publicId}</code> are refused
          {model.localId !== model.publicId ? ' here' : ''} once it is gone. The weights file stays.
        </p>
        {!read && !linksFailure && <p className="muted small">Reading the links…</p>}
        {linksFailure && !read && <p className="error-text small">Links could not be read: {linksFailure.message}</p>}
        {read && using.length === 0 && (
          <p className="muted small" data-testid="remove-model-no-links">
            No link uses this model.
          </p>
        )}
        {using.length > 0 && (
          <div className="small" data-testid="remove-model-links">
            <p>
              <strong>{using.length === 1 ? '1 link uses' : `${using.length} links use`} this model</strong> (kept, but
              they name a model this node no longer has; remove them on the Links screen):
            </p>
            <ul>
              {using.map((l) => (
                <li key={l.id} data-testid="remove-model-link">
                  <code>{linkLine(l)}</code>
                </li>
              ))}
            </ul>
          </div>
        )}
        {error && (
          <p className="error-text small" role="alert" data-testid="remove-model-error">
            {error}
          </p>
        )}
        <div className="dialog-buttons">
          <button type="button" onClick={onClose} data-testid="remove-model-cancel">
            Cancel
          </button>
          <button
            type="button"
            className="danger"
            disabled={removing}
            onClick={() => void remove()}
            data-testid="remove-model-confirm"
          >
            {removing ? 'Removing…' : 'Remove'}
          </button>
        </div>
      </div>
    </div>
  );
}
