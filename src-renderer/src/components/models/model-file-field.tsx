import { useState } from 'react';
import type { ModelFileList } from '../../../../src-router/contract';
import { formatBytes } from '../../runtime/runtime-format';
import { useAppStore } from '../../store/use-app-store';

/** The desktop app's native file dialog (the preload's `pickModelFile`), when this page runs there. */
export function nativePicker(): (() => Promise<string | null>) | null {
  const bridge = (globalThis as { routerdesk?: { pickModelFile?: () => Promise<string | null> } }).routerdesk;
  return typeof bridge?.pickModelFile === 'function' ? bridge.pickModelFile : null;
}

/**
 * The model file: a path field, a browser of the folders the node may read (models.shared_dir, the models folder,
 * models.browse_dirs) and, in the desktop app on its own node, the native file dialog. `onPick` is called with a path
 * chosen in the browser or the native dialog, and when the typed path is left.
 */
export function ModelFileField({
  value,
  error,
  native,
  onChange,
  onPick,
}: {
  value: string;
  error: string | null;
  native: boolean;
  onChange(v: string): void;
  onPick(path: string): void;
}) {
  const listModelFiles = useAppStore((s) => s.listModelFiles);
  const [listing, setListing] = useState<ModelFileList | null>(null);
  const [open, setOpen] = useState(false);
  const [browseError, setBrowseError] = useState<string | null>(null);
  const picker = native ? nativePicker() : null;

  async function browse(dir?: string) {
    setOpen(true);
    setBrowseError(null);
    const result = await listModelFiles(dir);
    if (result.ok) setListing(result.value);
    else setBrowseError(result.failure.message);
  }

  async function pickNative() {
    const path = await picker?.();
    if (path) onPick(path);
  }

  return (
    <div className="dialog-field">
      <label htmlFor="model-path">Model file</label>
      <div className="control-row">
        <input
          id="model-path"
          className="grow"
          type="text"
          spellCheck={false}
          placeholder="/path/to/model.gguf"
          value={value}
          aria-invalid={error ? true : undefined}
          data-testid="model-path"
          onChange={(e) => onChange(e.target.value)}
          onBlur={(e) => e.target.value.trim() && onPick(e.target.value.trim())}
        />
        <button
          type="button"
          onClick={() => (open ? setOpen(false) : void browse(listing?.dir ?? undefined))}
          data-testid="model-browse"
        >
          {open ? 'Close browser' : 'Browse…'}
        </button>
        {picker && (
          <button type="button" onClick={() => void pickNative()} data-testid="model-native-pick">
            Choose file…
          </button>
        )}
      </div>
      {error && (
        <span className="error-text small" role="alert" data-testid="model-path-error">
          {error}
        </span>
      )}
      {open && (
        <div className="file-browser" data-testid="model-file-browser">
          <div className="file-browser-head">
            <button
              type="button"
              disabled={!listing?.dir}
              onClick={() => void browse(listing?.parent ?? undefined)}
              data-testid="model-browse-up"
            >
              ↑
            </button>
            <code className="grow" data-testid="model-browse-dir">
              {listing?.dir ?? 'folders this node may read'}
            </code>
          </div>
          {browseError && (
            <p className="error-text small" role="alert" data-testid="model-browse-error">
              {browseError}
            </p>
          )}
          {listing && listing.entries.length === 0 && (
            <p className="muted small" style={{ padding: '0.3rem 0.55rem' }}>
              Nothing here. Folders the node may read: models.shared_dir, the models folder and models.browse_dirs
              (Settings).
            </p>
          )}
          <ul>
            {listing?.entries.map((e) => (
              <li key={e.path}>
                <button
                  type="button"
                  disabled={e.kind === 'file' && !e.gguf}
                  title={e.path}
                  data-testid="model-browse-entry"
                  data-kind={e.kind}
                  data-name={e.name}
                  onClick={() => {
                    if (e.kind === 'dir') void browse(e.path);
                    else {
                      setOpen(false);
                      onPick(e.path);
                    }
                  }}
                >
                  <span aria-hidden="true">{e.kind === 'dir' ? '📁' : '📄'}</span>
                  <span>{e.name}</span>
                  {e.size !== null && <span className="file-size">{formatBytes(e.size)}</span>}
                </button>
              </li>
            ))}
          </ul>
          {listing?.truncated && <p className="muted small">More entries than shown: type the path.</p>}
        </div>
      )}
    </div>
  );
}
