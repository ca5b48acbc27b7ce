import { isPlaceholderToken, SETTINGS_MASK } from '../../../src-router/contract';

/**
 * The Settings screen's form, pure: the fields it edits, the draft read from the config object the node
 * returned (the YAML's own shape, secrets masked), the whole config object written back from the draft (a field left
 * as read is left as read, a masked secret included: the node keeps its value), where a 400's `param` belongs, and
 * ROLE-2's placeholder hint before sending. Tested in renderer-settings-form.test.ts.
 */

type Json = Record<string, unknown>;

/** How a field is typed and written back: integers and durations that are plain numbers go as numbers. */
export type FieldKind = 'text' | 'secret' | 'integer' | 'duration' | 'boolean' | 'role' | 'lines';
export type FieldGroup = 'node' | 'lending';

export interface SettingsField {
  /** The field's path in the config, as the node names it in a 400 (`config.` + path). */
  path: string;
  label: string;
  kind: FieldKind;
  group: FieldGroup;
  /** Shown under the field when the JSON Schema has no description of its own. */
  help?: string;
}

export const SLAVE_URLS_PATH = 'cluster.slave_urls';
export const TOKEN_PATH = 'cluster.token';
export const ROLE_PATH = 'cluster.role';
export const REDIS_PATH = 'redis.url';

/** Every scalar field of the form, in screen order (the slave URLs are a list, edited apart). */
export const SETTINGS_FIELDS: readonly SettingsField[] = [
  {
    path: ROLE_PATH,
    label: 'Role',
    kind: 'role',
    group: 'node',
    help: 'standalone: a cluster of one; master: routes to the slaves below and polls them',
  },
  {
    path: 'cluster.node_id',
    label: 'Node ID',
    kind: 'text',
    group: 'node',
    help: 'unique in the cluster (letters, digits, dot, dash, underscore)',
  },
  {
    path: TOKEN_PATH,
    label: 'Cluster token',
    kind: 'secret',
    group: 'node',
    help: 'shared by every node of the cluster; a master or slave refuses a placeholder',
  },
  {
    path: 'server.host',
    label: 'Listen address',
    kind: 'text',
    group: 'node',
    help: '127.0.0.1: this machine only; 0.0.0.0: every interface',
  },
  {
    path: 'server.port',
    label: 'Port',
    kind: 'integer',
    group: 'node',
    help: '0: a free port chosen at start (kept across restarts)',
  },
  {
    path: 'models.config_dir',
    label: 'Models folder',
    kind: 'text',
    group: 'node',
    help: 'a folder of model configs (one YAML file per model); relative to the config file',
  },
  {
    path: 'models.shared_dir',
    label: 'Shared folder',
    kind: 'text',
    group: 'node',
    help: 'a folder of model files and assets other nodes may fetch; the Add model dialog browses it',
  },
  {
    path: 'models.browse_dirs',
    label: 'Model folders',
    kind: 'lines',
    group: 'node',
    help: 'more folders the Add model dialog may browse, one a line',
  },
  {
    path: 'redis.url',
    label: 'Redis URL',
    kind: 'text',
    group: 'node',
    help: 'empty: the embedded keyspace (a single node needs no Redis)',
  },
  {
    path: 'cluster.scheduling_backend_depth',
    label: 'Engine depth',
    kind: 'integer',
    group: 'lending',
    help: 'requests of an enrolled model at its engine at once; more wait in the router queue, where they may be lent',
  },
  {
    path: 'cluster.scheduling_refresh_interval',
    label: 'Refresh interval',
    kind: 'duration',
    group: 'lending',
    help: "how often the master polls every node's lending state without an event (LEASE-3)",
  },
  {
    path: 'cluster.scheduling_min_samples',
    label: 'Min samples',
    kind: 'integer',
    group: 'lending',
    help: 'measured requests a model needs, inside the sample window, for its own cost fit (PRICE-2)',
  },
  {
    path: 'cluster.scheduling_sample_window',
    label: 'Sample window',
    kind: 'duration',
    group: 'lending',
    help: 'how far back measured requests count for the cost fits (PRICE-2)',
  },
  {
    path: 'cluster.scheduling_context_reserve',
    label: 'Context reserve',
    kind: 'integer',
    group: 'lending',
    help: 'tokens reserved for an answer when the client states no max_tokens (LLM-3)',
  },
  {
    path: 'cluster.offload_probe_idle',
    label: 'Probe idle',
    kind: 'duration',
    group: 'lending',
    help: 'idle time before a helper not chosen by cost gets a one-request probe (PROBE-1)',
  },
  {
    path: 'cluster.offload_restore_delay',
    label: 'Restore delay',
    kind: 'duration',
    group: 'lending',
    help: 'quiet time before the model borrowed work displaced is loaded back (HELPER-4)',
  },
  {
    path: 'cluster.offload_lent_stall_timeout',
    label: 'Lent stall timeout',
    kind: 'duration',
    group: 'lending',
    help: "no change in a helper's lent requests this long: the master checks it and takes them back if it stalled (HELPER-5)",
  },
  {
    path: 'cluster.offload_hold_for_faster_helper',
    label: 'Hold for a faster helper',
    kind: 'boolean',
    group: 'lending',
    help: 'an owner may keep its next request for a live lease whose helper is predicted to finish it sooner (HOLD-1)',
  },
  {
    path: 'cluster.offload_decisions_retention',
    label: 'Decisions retention',
    kind: 'duration',
    group: 'lending',
    help: 'how long lending decision-log rows are kept',
  },
];

export type FieldValue = string | boolean;

export interface SettingsFormState {
  /** The config object as the node returned it: what is written back, with the changed fields applied. */
  base: Json;
  /** The fields as read, to leave untouched what was not changed. */
  initial: Record<string, FieldValue>;
  values: Record<string, FieldValue>;
  initialSlaveUrls: string[];
  slaveUrls: string[];
}

const isObject = (v: unknown): v is Json => !!v && typeof v === 'object' && !Array.isArray(v);

function getPath(config: Json, path: string): unknown {
  let at: unknown = config;
  for (const key of path.split('.')) at = isObject(at) ? at[key] : undefined;
  return at;
}

/** Sets (or, for undefined, removes) a value, creating its section when the config had none. */
function setPath(config: Json, path: string, value: unknown): void {
  const keys = path.split('.');
  let at = config;
  for (const key of keys.slice(0, -1)) {
    if (!isObject(at[key])) at[key] = {};
    at = at[key] as Json;
  }
  const last = keys[keys.length - 1];
  if (value === undefined) delete at[last];
  else at[last] = value;
}

/** What a field shows for a value of the config: absent is empty (the default shows as the placeholder). */
function shown(field: SettingsField, value: unknown, fallback: unknown): FieldValue {
  if (field.kind === 'boolean') return typeof value === 'boolean' ? value : fallback === true;
  if (field.kind === 'role') return typeof value === 'string' ? value : 'standalone';
  if (field.kind === 'lines') return Array.isArray(value) ? value.map(String).join('\n') : '';
  return value === undefined || value === null ? '' : String(value);
}

/** The form as read from the config (a missing boolean shows its schema default). */
export function formFromConfig(config: Json, schema: Json = {}): SettingsFormState {
  const values: Record<string, FieldValue> = {};
  for (const f of SETTINGS_FIELDS)
    values[f.path] = shown(f, getPath(config, f.path), fieldFacts(schema, f.path).default);
  const slaves = getPath(config, SLAVE_URLS_PATH);
  const slaveUrls = Array.isArray(slaves) ? slaves.map(String) : [];
  return { base: structuredClone(config), initial: { ...values }, values, initialSlaveUrls: [...slaveUrls], slaveUrls };
}

const INTEGER = /^-?\d+$/;
const PLAIN_NUMBER = /^\d+(\.\d+)?$/;

/**
 * A field's value as written: empty removes the key (the node's default applies); an integer or a bare-number
 * duration is a number; anything else goes as typed, so the node's own validation names what is wrong.
 */
function written(field: SettingsField, value: FieldValue): unknown {
  if (typeof value === 'boolean') return value;
  const text = value.trim();
  if (text === '') return undefined;
  if (field.kind === 'lines')
    return text
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
  if (field.kind === 'integer' && INTEGER.test(text)) return Number(text);
  if (field.kind === 'duration' && PLAIN_NUMBER.test(text)) return Number(text);
  return text;
}

const sameList = (a: string[], b: string[]) => a.length === b.length && a.every((v, i) => v === b[i]);

/** The whole config object to PUT: the one read, with only the changed fields replaced. */
export function configFromForm(form: SettingsFormState): Json {
  const out = structuredClone(form.base);
  for (const f of SETTINGS_FIELDS) {
    const value = form.values[f.path];
    if (value !== form.initial[f.path]) setPath(out, f.path, written(f, value));
  }
  if (!sameList(form.slaveUrls, form.initialSlaveUrls))
    setPath(out, SLAVE_URLS_PATH, form.slaveUrls.map((u) => u.trim()).filter(Boolean));
  return out;
}

/** The form's changes, as the reducer takes them. */
export type SettingsFormAction =
  | { type: 'field'; path: string; value: FieldValue }
  | { type: 'slave-add' }
  | { type: 'slave-set'; index: number; value: string }
  | { type: 'slave-remove'; index: number };

export function settingsFormReducer(form: SettingsFormState, a: SettingsFormAction): SettingsFormState {
  switch (a.type) {
    case 'field':
      return { ...form, values: { ...form.values, [a.path]: a.value } };
    case 'slave-add':
      return { ...form, slaveUrls: [...form.slaveUrls, ''] };
    case 'slave-set':
      return { ...form, slaveUrls: form.slaveUrls.map((u, i) => (i === a.index ? a.value : u)) };
    case 'slave-remove':
      return { ...form, slaveUrls: form.slaveUrls.filter((_, i) => i !== a.index) };
  }
}

/** Something differs from what was read. */
export const formChanged = (form: SettingsFormState): boolean =>
  SETTINGS_FIELDS.some((f) => form.values[f.path] !== form.initial[f.path]) ||
  !sameList(form.slaveUrls, form.initialSlaveUrls);

/**
 * The form field a 400's `param` belongs to: `config.server.port` → `server.port`, `config.cluster.slave_urls.1` →
 * the slave list; null for the whole form (`config` itself, a section, a field the form does not show).
 */
export function fieldOfParam(param: string | null | undefined): string | null {
  if (!param) return null;
  const path = param.replace(/^config\.?/, '');
  const paths = [...SETTINGS_FIELDS.map((f) => f.path), SLAVE_URLS_PATH];
  return paths.find((p) => path === p || path.startsWith(`${p}.`)) ?? null;
}

/** The node roles the form offers: standalone and master, and the one it has when it is a slave (kept as is). */
export function roleOptions(form: SettingsFormState): string[] {
  const current = String(form.initial[ROLE_PATH]);
  return current === 'standalone' || current === 'master'
    ? ['standalone', 'master']
    : ['standalone', 'master', current];
}

/** Where a Redis URL's password goes (scheme, host, port), with the mask read as a password; null when no URL. */
function redisDestination(url: string): string | null {
  try {
    const u = new URL(url.split(SETTINGS_MASK).join('x'));
    return `${u.protocol}//${u.host}`;
  } catch {
    return null;
  }
}

/**
 * Hints before sending, by field (the node decides: it refuses the same with a 400). ROLE-2: a master or slave needs
 * a real cluster token; a stored token left masked is the node's to check. A stored secret stays with its
 * destination: a masked cluster token with a new slave, or a masked Redis password with another host, must be given
 * again.
 */
export function formHints(form: SettingsFormState): Record<string, string> {
  const hints: Record<string, string> = {};
  const role = String(form.values[ROLE_PATH]);
  const token = String(form.values[TOKEN_PATH]);
  if (role !== 'standalone' && token !== SETTINGS_MASK && isPlaceholderToken(token)) {
    hints[TOKEN_PATH] =
      `a ${role} needs the cluster's shared token: this one is empty, a placeholder or shorter than 8 characters (Generate makes a strong one)`;
  }
  const known = new Set(form.initialSlaveUrls.map(destination));
  const added = form.slaveUrls.map(destination).filter((u) => u && !known.has(u));
  if (token === SETTINGS_MASK && added.length)
    hints[TOKEN_PATH] =
      `the stored token was never sent to ${added.join(', ')}: give the cluster token again for the new slave`;
  const redis = String(form.values[REDIS_PATH]);
  if (redis.includes(SETTINGS_MASK) && redisDestination(redis) !== redisDestination(String(form.initial[REDIS_PATH]))) {
    hints[REDIS_PATH] =
      'the stored password belongs to the Redis server before: give the password again for the new one';
  }
  return hints;
}

/** A node URL as the node compares destinations: trimmed, no trailing slash, lower case. */
const destination = (url: string) => url.trim().replace(/\/+$/, '').toLowerCase();

/** A strong cluster token: 32 random bytes from `crypto.getRandomValues`, as 64 hex characters. */
export function generateClusterToken(
  random: (bytes: Uint8Array<ArrayBuffer>) => Uint8Array = (b) => globalThis.crypto.getRandomValues(b),
): string {
  return Array.from(random(new Uint8Array(32)), (b) => b.toString(16).padStart(2, '0')).join('');
}

export interface FieldFacts {
  description?: string;
  default?: unknown;
}

/** A field's description and default in the node config's JSON Schema (the one the GET returns). */
export function fieldFacts(schema: Json, path: string): FieldFacts {
  let at: unknown = schema;
  for (const key of path.split('.')) at = isObject(at) && isObject(at.properties) ? at.properties[key] : undefined;
  if (!isObject(at)) return {};
  return {
    ...(typeof at.description === 'string' ? { description: at.description } : {}),
    ...('default' in at ? { default: at.default } : {}),
  };
}

/** The placeholder of an empty field: the default the node uses then. */
export function fieldPlaceholder(schema: Json, field: SettingsField): string {
  if (field.path === 'redis.url') return 'embedded keyspace';
  const d = fieldFacts(schema, field.path).default;
  return d === undefined || d === '' ? '' : `default: ${String(d)}`;
}
