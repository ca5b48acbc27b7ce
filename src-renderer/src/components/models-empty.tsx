import { useEffect } from 'react';
import { addModelHint } from '../settings/add-model-hint';
import { useAppStore } from '../store/use-app-store';

/**
 * The Models screen while the node has no models: how to add one — a model config in the node's models
 * folder (the path from the Settings GET when this console may read it), pointing at a GGUF file.
 */
export function ModelsEmpty() {
  const settings = useAppStore((s) => s.settings);
  const fetchSettings = useAppStore((s) => s.fetchSettings);
  const unread = !settings.view && !settings.failure && !settings.loading;
  useEffect(() => {
    if (unread) void fetchSettings();
  }, [unread, fetchSettings]);
  const hint = addModelHint(settings.view);

  return (
    <div className="card empty-state models-empty" data-testid="models-empty" role="status">
      <p>
        <strong>No models yet.</strong> A model is a small YAML file in the node&apos;s models folder (
        {hint.folder ? <code data-testid="models-empty-folder">{hint.folder}</code> : <code>models.config_dir</code>}
        {hint.configFile && (
          <>
            , set in <code>{hint.configFile}</code> and on the <a href="#settings">Settings</a> screen
          </>
        )}
        ). Put one there for each model, naming its GGUF weights file, then restart the node:
      </p>
      <pre className="yaml-example" data-testid="models-empty-example">
        <span className="muted"># {hint.exampleFile}</span>
        {'\n'}
        {hint.exampleYaml}
      </pre>
    </div>
  );
}
