import type { ClusterModel, ConsoleModel, LinkRecord, ModelFileInspection } from '../../../src-router/contract';
import type { EngineView } from '../api/model-config-wire';

/**
 * The Add model dialog's form, pure: the draft read from a stored config (Edit) or an inspected file (Add), the
 * config body written from it (keys the form does not show kept as they were), where a 400's `param` belongs, what a
 * public name does in the registry (a new ID, a replica, a suffix), the backends offered, and the links that use a
 * model. Tested in renderer-model-form.test.ts.
 */

type Json = Record<string, unknown>;

export type ModelField = 'path' | 'backend' | 'name' | 'contextsize' | 'parallel' | 'capabilities';

/** The capabilities the dialog offers as checkboxes (a config's others are kept as they are). */
export const FORM_CAPABILITIES = ['text', 'embedding', 'multimodal'] as const;

/** The built-in engine: always there, needs nothing installed. */
export const BUILTIN_BACKEND = 'llama-node';

export interface ModelDraft {
  path: string;
  backend: string;
  name: string;
  contextsize: string;
  parallel: string;
  capabilities: string[];
}

export const emptyDraft = (): ModelDraft => ({
  path: '',
  backend: BUILTIN_BACKEND,
  name: '',
  contextsize: '',
  parallel: '',
  capabilities: ['text'],
});

const str = (v: unknown) => (typeof v === 'string' ? v : '');
const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? String(v) : '');

/** The draft of a stored config (Edit). */
export function draftFromConfig(config: Json): ModelDraft {
  const caps = Array.isArray(config.capabilities) ? config.capabilities.map(String) : ['text'];
  return {
    path: str(config.model),
    backend: str(config.backend) || BUILTIN_BACKEND,
    name: str(config.name),
    contextsize: num(config.contextsize),
    parallel: num(config.parallel),
    capabilities: caps,
  };
}

/** A public name from a file name: `Qwen2.5-0.5B-Instruct-Q4_K_M.gguf` → `qwen2.5-0.5b-instruct-q4_k_m`. */
export function nameFromPath(path: string): string {
  const file = path.split(/[\\/]/).pop() ?? '';
  return file
    .replace(/\.gguf$/i, '')
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[-.]+|-+$/g, '');
}

/**
 * The draft after a file was inspected: its capabilities, and a name from the file when the name field is empty or
 * still the one made from the file before. The context is not set from the header: the trained context is often far
 * more than the machine holds (the field shows it as a hint).
 */
export function draftWithInspection(
  draft: ModelDraft,
  inspection: ModelFileInspection,
  previousPath: string,
): ModelDraft {
  const autoName = draft.name === '' || draft.name === nameFromPath(previousPath);
  return {
    ...draft,
    path: inspection.path,
    name: autoName ? nameFromPath(inspection.path) : draft.name,
    capabilities: inspection.capabilities.length ? [...inspection.capabilities] : draft.capabilities,
  };
}

const INTEGER = /^\d+$/;

/** The field errors the dialog can tell before sending (the node checks again and has the last word). */
export function draftErrors(draft: ModelDraft): Partial<Record<ModelField, string>> {
  const errors: Partial<Record<ModelField, string>> = {};
  if (!draft.path.trim()) errors.path = 'choose the model file (a .gguf)';
  if (!draft.name.trim()) errors.name = 'give the model a public name (what clients send as `model`)';
  for (const f of ['contextsize', 'parallel'] as const) {
    const v = draft[f].trim();
    if (v !== '' && (!INTEGER.test(v) || Number(v) < 1))
      errors[f] = 'a whole number above 0, or empty for the engine default';
  }
  if (!draft.capabilities.length) errors.capabilities = 'pick at least one capability';
  return errors;
}

/**
 * The config body to POST or PUT: the stored config (Edit; empty for Add) with the form's fields replaced. An empty
 * number field removes its key (the engine default applies); capabilities the form does not offer are kept.
 */
export function configFromDraft(draft: ModelDraft, base: Json = {}): Json {
  const out: Json = structuredClone(base);
  out.name = draft.name.trim();
  out.backend = draft.backend;
  out.model = draft.path.trim();
  const kept = Array.isArray(base.capabilities)
    ? base.capabilities.map(String).filter((c) => !(FORM_CAPABILITIES as readonly string[]).includes(c))
    : [];
  out.capabilities = [...FORM_CAPABILITIES.filter((c) => draft.capabilities.includes(c)), ...kept];
  for (const f of ['contextsize', 'parallel'] as const) {
    const v = draft[f].trim();
    if (v === '') delete out[f];
    else out[f] = INTEGER.test(v) ? Number(v) : v;
  }
  return out;
}

const FIELD_OF_KEY: Record<string, ModelField> = {
  model: 'path',
  name: 'name',
  backend: 'backend',
  command: 'backend',
  contextsize: 'contextsize',
  parallel: 'parallel',
  capabilities: 'capabilities',
};

/**
 * The field a 400's `param` belongs to: `config.contextsize` → contextsize, `config.model` (or an inspected `path`)
 * → the model file, `config.capabilities.1` → capabilities; null for the whole form.
 */
export function fieldOfParam(param: string | null | undefined): ModelField | null {
  if (!param) return null;
  if (param === 'path' || param === 'dir') return 'path';
  const key = param.replace(/^config\.?/, '').split('.')[0];
  return FIELD_OF_KEY[key] ?? null;
}

export type NameAdviceKind = 'new' | 'same' | 'taken' | 'cluster-replica-or-suffix';

export interface NameAdvice {
  kind: NameAdviceKind;
  message: string;
}

/** The first `base-N` (N ≥ 2) no model of the cluster has: the ID a config with other hashes would get (ID-2). */
export function nextSuffix(base: string, taken: readonly string[]): string {
  const ids = new Set(taken);
  let n = 2;
  while (ids.has(`${base}-${n}`)) n++;
  return `${base}-${n}`;
}

/**
 * What a public name does (ID-2, ID-4): a name no model has is a new public ID; one of this node's models has it:
 * taken (the node refuses a second config of one name from the console; two files of one name, written by hand, are
 * replicas); another node of the cluster has it: the same config and weights join it as a replica, different ones
 * are listed as `name-N`. `editing`: the model's own current name (keeping it is no collision). Pure.
 */
export function nameAdvice(input: {
  name: string;
  editing?: string | null;
  localModels: readonly ConsoleModel[] | null;
  catalog: readonly ClusterModel[] | null;
  nodeId: string | null;
}): NameAdvice {
  const name = input.name.trim();
  if (!name) return { kind: 'new', message: '' };
  if (input.editing && name === input.editing) {
    const others = (input.localModels ?? []).filter((m) => m.publicId === name).length;
    return {
      kind: 'same',
      message: others > 1 ? `keeps the public ID ${name} with its ${others - 1} other replica(s) on this node` : '',
    };
  }
  const local = (input.localModels ?? []).filter((m) => m.publicId === name);
  if (local.length) {
    return {
      kind: 'taken',
      message: `${name} is already a model of this node (${local.map((m) => m.localId).join(', ')}): choose another name. (Two config files of one name are replicas of one ID: write the second file by hand for that.)`,
    };
  }
  const remote = (input.catalog ?? []).filter(
    (e) => e.baseId === name && e.replicas.some((r) => r.nodeId !== input.nodeId),
  );
  if (remote.length) {
    const nodes = [...new Set(remote.flatMap((e) => e.replicas.map((r) => r.nodeId)))].join(', ');
    const suffix = nextSuffix(
      name,
      (input.catalog ?? []).map((e) => e.id),
    );
    return {
      kind: 'cluster-replica-or-suffix',
      message: `${nodes} already serve ${name}: with the same config and weights this becomes a replica of it; otherwise the cluster lists this one as ${suffix}.`,
    };
  }
  return { kind: 'new', message: `a new public ID: clients ask for model "${name}"` };
}

export interface BackendOption {
  value: string;
  label: string;
  disabled: boolean;
  /** Why a disabled backend cannot be chosen, and how to get it. */
  note: string;
}

/**
 * The backends the dialog offers: the built-in engine first, then each engine the node found (with its version and
 * path), then the missing ones, disabled with the reason and how to get them. Without a discovery answer, the
 * built-in engine and the config's own backend.
 */
export function backendOptions(engines: readonly EngineView[] | null, current: string): BackendOption[] {
  const out: BackendOption[] = [
    { value: BUILTIN_BACKEND, label: `${BUILTIN_BACKEND} (built-in)`, disabled: false, note: '' },
  ];
  for (const e of engines ?? []) {
    if (e.family === BUILTIN_BACKEND || e.family === 'sim') continue;
    if (e.available)
      out.push({
        value: e.family,
        label: [e.family, firstLine(e.version), e.path && `(${e.path})`].filter(Boolean).join(' '),
        disabled: false,
        note: '',
      });
  }
  for (const e of engines ?? []) {
    if (e.family === BUILTIN_BACKEND || e.family === 'sim' || e.available) continue;
    out.push({
      value: e.family,
      label: `${e.family} — not found`,
      disabled: e.family !== current,
      note: [e.reason, e.how_to_get].filter(Boolean).join(' — '),
    });
  }
  if (!out.some((o) => o.value === current) && current)
    out.push({ value: current, label: current, disabled: false, note: '' });
  return out;
}

/**
 * What a multimodal model still needs that the dialog does not write: model configs have no projector key, so only
 * an external engine whose command names the projector reads images. Null when nothing is missing. Pure.
 */
export function projectorNote(
  draft: Pick<ModelDraft, 'backend' | 'capabilities'>,
  projector: string | null,
  hasCommand: boolean,
): string | null {
  if (!draft.capabilities.includes('multimodal') || hasCommand) return null;
  if (draft.backend === 'llama-server') {
    return `llama-server reads images only with its projector: add a command to the config naming it (the default command with --mmproj ${projector ?? '<mmproj file>'}); without one, image requests are refused`;
  }
  return `${draft.backend} is not known to read images from this config: image requests may be refused (llama-server with --mmproj in its command does)`;
}

/** The first line of a `--version` answer (some print several). */
export const firstLine = (text: string | null | undefined) => (text ?? '').split('\n')[0].trim();

/** The links (both lanes) whose owner or helper is this model on its node. */
export function linksUsing(model: { nodeId: string; localId: string }, links: readonly LinkRecord[]): LinkRecord[] {
  const same = (end: { node_id: string; model: string }) => end.node_id === model.nodeId && end.model === model.localId;
  return links.filter((l) => same(l.owner) || same(l.helper));
}

/** One line per link for the Remove confirmation: `text: node-a/chat → node-b/chat`. */
export const linkLine = (l: LinkRecord) =>
  `${l.lane}: ${l.owner.node_id}/${l.owner.model} → ${l.helper.node_id}/${l.helper.model}`;
