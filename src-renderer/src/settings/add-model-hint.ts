import type { SettingsView } from '../../../src-router/contract';

/**
 * What the Models screen says while the node has no models: where model configs go — the folder of
 * `models.config_dir`, resolved as the node resolves it (relative to the config file), when the Settings GET could be
 * read — and a minimal model config pointing at a GGUF file. Pure; tested in renderer-settings-form.test.ts.
 */

export interface AddModelHint {
  /** The models folder as the node reads it; null when unknown (no settings read) or not set. */
  folder: string | null;
  /** The node's config file, when known. */
  configFile: string | null;
  /** A file name and its YAML: a minimal model config. */
  exampleFile: string;
  exampleYaml: string;
}

const isAbsolute = (p: string) => p.startsWith('/') || /^[A-Za-z]:[\\/]/.test(p) || p.startsWith('\\\\');

function dirOf(file: string): string {
  const i = Math.max(file.lastIndexOf('/'), file.lastIndexOf('\\'));
  return i > 0 ? file.slice(0, i) : i === 0 ? '/' : '.';
}

/** `./models` next to `/home/u/.config/Routerdesk/node.yaml` → `/home/u/.config/Routerdesk/models`. */
export function resolveFromConfig(configFile: string, path: string): string {
  if (isAbsolute(path)) return path;
  const base = dirOf(configFile);
  const rest = path.replace(/^\.[\\/]/, '');
  const sep = base.includes('\\') && !base.includes('/') ? '\\' : '/';
  return rest === '.' || rest === '' ? base : `${base.replace(/[\\/]$/, '')}${sep}${rest}`;
}

export const EXAMPLE_MODEL_FILE = 'my-model.yaml';
export const EXAMPLE_MODEL_YAML = [
  'name: my-model            # the model ID clients ask for',
  'backend: llama-node        # the built-in llama.cpp engine',
  "model: /path/to/model.gguf # a GGUF weights file (relative: from this file's folder)",
  'capabilities: [text]',
  '',
].join('\n');

export function addModelHint(view: SettingsView | null): AddModelHint {
  const models = view?.config.models;
  const dir =
    models && typeof models === 'object' && !Array.isArray(models)
      ? (models as Record<string, unknown>).config_dir
      : undefined;
  const folder = view && typeof dir === 'string' && dir.trim() ? resolveFromConfig(view.path, dir.trim()) : null;
  return { folder, configFile: view?.path ?? null, exampleFile: EXAMPLE_MODEL_FILE, exampleYaml: EXAMPLE_MODEL_YAML };
}
