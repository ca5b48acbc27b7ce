import { useEffect } from 'react';
import { addModelHint } from '../settings/add-model-hint';
import { useAppStore } from '../store/use-app-store';

/**
 * The Models screen while the node has no models: the Add model button when this console may change them, and the
 * YAML way — a model config in the node's models folder (the path from the Settings GET when this console may read
 * it), pointing at a GGUF file.
 */
export function ModelsEmpty({ onAdd }: { onAdd?: () => void }) {
  const settings = useAppStore((s) => s.settings);
  const fetchSettings = useAppStore((s) => s.fetchSettings);
  const unread = !settings.view && !settings.failure && !settings.loading;
  useEffect(() => {
    if (unread) void fetchSettings();
  }, [unread, fetchSettings]);
  const hint = addModelHint(settings.view);

  return (
    <div className="card empty-state models-empty" data-testid="models-empty" role="status">
      {onAdd && (
        <p>
          <strong>No models yet.</strong>{' '}
          <button type="button" className="primary" onClick={onAdd} data-testid="models-empty-add">
            Add model
          </button>{' '}
          picks a GGUF file, its engine and a public name, and serves it without a restart.
        </p>
      )}
      <p>
        {onAdd ? (
          'Or by hand: a'
        ) : (
          <>
            <strong>No models yet.</strong> A
          </>
        )}{' '}
        model is a small YAML file in the node&apos;s models folder (
        {hint.folder ? <code data-testid="models-empty-folder">{hint.folder}</code> : <code>models.config_dir</code>}
        {hint.configFile && (
          <>
            , set in <code>{hint.configFile}</code> and on the <a href="#settings">Settings</a> screen
          </>
        )}
        ). Put one there for each model, naming its GGUF weights file; the node picks it up within a second or two:
      </p>
      <pre className="yaml-example" data-testid="models-empty-example">
        <span className="muted"># {hint.exampleFile}</span>
        {'\n'}
        {hint.exampleYaml}
      </pre>
    </div>
  );
}
