import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { configJsonSchemas } from '../../src-router/config/json-schema';
import { modelConfigSchema } from '../../src-router/config/model-config';
import { maskSecrets, unmaskSecrets, validateConfig } from '../../src-router/config/settings-file';
import { SETTINGS_MASK } from '../../src-router/contract';

// The Settings screen (issue #13) against the router's own config schema and validation: every field the form shows
// is a field of the node config, what the form writes is what the node accepts (masked secrets put back as the node
// does), a bad value is refused at the path the form maps to its field, and the Models screen's example is a valid
// model config. The renderer modules are loaded by path: they belong to the web TypeScript project, not this one.

type Json = Record<string, unknown>;
type SettingsFormAction =
  | { type: 'field'; path: string; value: string | boolean }
  | { type: 'slave-add' }
  | { type: 'slave-set'; index: number; value: string };
interface Field {
  path: string;
}
interface RendererSettingsForm {
  SETTINGS_FIELDS: readonly Field[];
  formFromConfig(config: Json, schema: Json): unknown;
  settingsFormReducer(form: unknown, a: SettingsFormAction): unknown;
  configFromForm(form: unknown): Json;
  fieldOfParam(param: string): string | null;
  fieldFacts(schema: Json, path: string): { description?: string; default?: unknown };
  fieldPlaceholder(schema: Json, field: Field): string;
  formHints(form: unknown): Record<string, string>;
}
const load = async <T>(rel: string): Promise<T> => (await import(new URL(rel, import.meta.url).pathname)) as T;
const {
  SETTINGS_FIELDS,
  formFromConfig,
  settingsFormReducer,
  configFromForm,
  fieldOfParam,
  fieldFacts,
  fieldPlaceholder,
  formHints,
} = await load<RendererSettingsForm>('../../src-renderer/src/settings/settings-form.ts');
const { EXAMPLE_MODEL_YAML } = await load<{ EXAMPLE_MODEL_YAML: string }>(
  '../../src-renderer/src/settings/add-model-hint.ts',
);

const SCHEMA = configJsonSchemas()['node-config.schema.json'] as Record<string, unknown>;
const FILE = '/tmp/routerdesk/node.yaml';
/** A config as the GET returns it (the desktop app's first-launch shape, with secrets) and the file behind it. */
const STORED = {
  server: { host: '127.0.0.1', port: 8080, api_keys: ['client-key-0123456789'] },
  cluster: { role: 'standalone', node_id: 'local', store_dir: './store' },
  models: { config_dir: './models' },
  console: { token: 'console-token-0123456789' },
};
const SHOWN = maskSecrets(STORED);
const nodeValidates = (out: Json) => validateConfig(unmaskSecrets(out, STORED), FILE);
const edit = (...actions: SettingsFormAction[]) =>
  configFromForm(actions.reduce(settingsFormReducer, formFromConfig(SHOWN, SCHEMA)));
const set = (path: string, value: string | boolean): SettingsFormAction => ({ type: 'field', path, value });

describe('settings form ↔ the node config', () => {
  it("every field the form shows is in the node config's JSON Schema, with a placeholder from its default", () => {
    const at = (path: string) =>
      path
        .split('.')
        .reduce<Record<string, unknown> | undefined>(
          (o, k) => (o?.properties as Record<string, Record<string, unknown>> | undefined)?.[k],
          SCHEMA,
        );
    for (const f of [...SETTINGS_FIELDS.map((x) => x.path), 'cluster.slave_urls']) expect(at(f), f).toBeDefined();
    expect(fieldFacts(SCHEMA, 'server.port')).toEqual({
      default: 8080,
      description: 'port the node listens on; 0: a free port chosen at start (kept across restarts)',
    });
    expect(
      fieldPlaceholder(SCHEMA, SETTINGS_FIELDS.find((f) => f.path === 'cluster.offload_lent_stall_timeout')!),
    ).toBe('default: 3m');
  });

  it('what the form writes the node accepts: a master with a token, slaves, lending settings; masked secrets kept', () => {
    const out = edit(
      set('cluster.role', 'master'),
      set('cluster.token', 'generated-token-0123456789'),
      { type: 'slave-add' },
      { type: 'slave-set', index: 0, value: 'http://10.0.0.2:8080' },
      set('cluster.scheduling_backend_depth', '3'),
      set('cluster.offload_probe_idle', '750'),
      set('cluster.offload_restore_delay', '2s'),
      set('cluster.offload_hold_for_faster_helper', false),
      set('redis.url', 'redis://127.0.0.1:6379'),
    );
    const config = nodeValidates(out);
    expect(config.cluster).toMatchObject({
      role: 'master',
      token: 'generated-token-0123456789',
      slave_urls: ['http://10.0.0.2:8080'],
      scheduling_backend_depth: 3,
      offload_probe_idle: 750,
      offload_restore_delay: 2000,
      offload_hold_for_faster_helper: false,
    });
    expect(config.console.token).toBe('console-token-0123456789');
    expect(config.server.api_keys).toEqual(['client-key-0123456789']);
    expect(config.models.config_dir).toBe('/tmp/routerdesk/models');
    expect(config.redis.url).toBe('redis://127.0.0.1:6379');
  });

  it('a bad value is refused at the path the form shows it under', () => {
    const refusedAt = (out: Json) => {
      try {
        nodeValidates(out);
      } catch (err) {
        const first = (err as { issues: { path: string }[] }).issues[0];
        return fieldOfParam(`config.${first.path}`);
      }
      return 'accepted';
    };
    expect(refusedAt(edit(set('server.port', 'eighty')))).toBe('server.port');
    expect(refusedAt(edit(set('cluster.node_id', 'not ok!')))).toBe('cluster.node_id');
    expect(refusedAt(edit(set('cluster.role', 'master'), set('cluster.token', 'changeme')))).toBe('cluster.token');
    expect(refusedAt(edit(set('cluster.offload_probe_idle', 'soon')))).toBe('cluster.offload_probe_idle');
    expect(refusedAt(edit({ type: 'slave-add' }, { type: 'slave-set', index: 0, value: 'not a url' }))).toBe(
      'cluster.slave_urls',
    );
  });

  it('issue #26 item 8: a stored secret kept masked for a new destination: the form hints at the field the node refuses it at', () => {
    const stored = {
      ...STORED,
      cluster: {
        ...STORED.cluster,
        role: 'master',
        token: 'stored-cluster-token-0123456789',
        slave_urls: ['http://10.0.0.2:8080'],
      },
      redis: { url: 'redis://:redis-pass-0123@db-a:6379/0' },
    };
    const shown = maskSecrets(stored);
    const form = (...actions: SettingsFormAction[]) =>
      actions.reduce(settingsFormReducer, formFromConfig(shown, SCHEMA));
    const refusedAt = (f: unknown) => {
      try {
        validateConfig(unmaskSecrets(configFromForm(f), stored), FILE);
      } catch (err) {
        return fieldOfParam(`config.${(err as { issues: { path: string }[] }).issues[0].path}`);
      }
      return 'accepted';
    };
    const newSlave = form({ type: 'slave-add' }, { type: 'slave-set', index: 1, value: 'http://10.0.0.9:8080' });
    expect(Object.keys(formHints(newSlave))).toEqual(['cluster.token']);
    expect(refusedAt(newSlave)).toBe('cluster.token');
    const newRedis = form(set('redis.url', `redis://:${SETTINGS_MASK}@db-b:6379/0`));
    expect(Object.keys(formHints(newRedis))).toEqual(['redis.url']);
    expect(refusedAt(newRedis)).toBe('redis.url');
    // The same destinations: no hint, and the node keeps the stored secrets.
    const same = form(set('cluster.node_id', 'desk'));
    expect(formHints(same)).toEqual({});
    expect(validateConfig(unmaskSecrets(configFromForm(same), stored), FILE)).toMatchObject({
      cluster: { token: 'stored-cluster-token-0123456789' },
      redis: { url: 'redis://:redis-pass-0123@db-a:6379/0' },
    });
  });

  it("the Models screen's example is a valid model config naming a GGUF file", () => {
    const example = modelConfigSchema.parse(parse(EXAMPLE_MODEL_YAML));
    expect(example).toMatchObject({ name: 'my-model', backend: 'llama-node', capabilities: ['text'] });
    expect(example.model).toMatch(/\.gguf$/);
  });
});
