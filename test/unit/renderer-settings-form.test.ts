import { describe, expect, it } from 'vitest';
import { addModelHint, resolveFromConfig } from '../../src-renderer/src/settings/add-model-hint';
import {
  configFromForm,
  fieldFacts,
  fieldOfParam,
  fieldPlaceholder,
  formChanged,
  formFromConfig,
  formHints,
  generateClusterToken,
  roleOptions,
  SETTINGS_FIELDS,
  type SettingsFormAction,
  type SettingsFormState,
  settingsFormReducer,
} from '../../src-renderer/src/settings/settings-form';
import { slaveRows } from '../../src-renderer/src/settings/slaves-view';
import { type ClusterNodeView, isPlaceholderToken, SETTINGS_MASK, type SettingsView } from '../../src-router/contract';

// The Settings screen's form (issue #13): draft ↔ config object in the YAML's own shape, masks kept, a 400's param
// → the field, ROLE-2's hint and the generated token; the Models screen's empty state; a master's slave rows.
// settings-console-parity.test.ts checks the same against the router's own schema and validation.

/** The parts of the node config's JSON Schema the form reads (the GET returns the whole one). */
const SCHEMA = {
  type: 'object',
  properties: {
    server: {
      type: 'object',
      properties: {
        port: { default: 8080, type: 'integer' },
        max_queue: { default: 1000, description: 'requests that may wait; more get 429', type: 'integer' },
      },
    },
    cluster: {
      type: 'object',
      properties: {
        offload_probe_idle: { default: '5s', type: ['string', 'number'] },
        offload_hold_for_faster_helper: { default: true, type: 'boolean' },
      },
    },
    redis: { type: 'object', properties: { url: { type: 'string' } } },
  },
};

/** A config as the GET returns it: relative paths, a duration as written, masked secrets, a section the form does not show. */
const CONFIG = {
  server: { host: '127.0.0.1', port: 8080, api_keys: [SETTINGS_MASK, SETTINGS_MASK] },
  cluster: { role: 'standalone', node_id: 'local', store_dir: './store', offload_probe_idle: '5s' },
  models: { config_dir: './models' },
  console: { token: SETTINGS_MASK },
  routing: { strategy: 'round-robin' },
};

const apply = (form: SettingsFormState, ...actions: SettingsFormAction[]) => actions.reduce(settingsFormReducer, form);
const set = (path: string, value: string | boolean): SettingsFormAction => ({ type: 'field', path, value });

describe('settings form: draft ↔ config object', () => {
  it('reads every field of the config as the form shows it; absent fields are empty, a missing boolean its default', () => {
    const form = formFromConfig(CONFIG, SCHEMA);
    expect(form.values).toMatchObject({
      'cluster.role': 'standalone',
      'cluster.node_id': 'local',
      'cluster.token': '',
      'server.host': '127.0.0.1',
      'server.port': '8080',
      'models.config_dir': './models',
      'redis.url': '',
      'cluster.offload_probe_idle': '5s',
      'cluster.scheduling_backend_depth': '',
      'cluster.offload_hold_for_faster_helper': true,
    });
    expect(form.slaveUrls).toEqual([]);
    expect(formChanged(form)).toBe(false);
  });

  it('nothing changed: the same object back, masked secrets as they were (the node keeps their values)', () => {
    const form = formFromConfig(CONFIG, SCHEMA);
    expect(configFromForm(form)).toEqual(CONFIG);
    // Changed and changed back is unchanged too.
    expect(configFromForm(apply(form, set('server.port', '9'), set('server.port', '8080')))).toEqual(CONFIG);
  });

  it('a masked cluster token stays the mask unless replaced', () => {
    const masked = { ...CONFIG, cluster: { ...CONFIG.cluster, role: 'master', token: SETTINGS_MASK } };
    const form = formFromConfig(masked, SCHEMA);
    expect(form.values['cluster.token']).toBe(SETTINGS_MASK);
    expect((configFromForm(apply(form, set('cluster.node_id', 'desk'))).cluster as Record<string, unknown>).token).toBe(
      SETTINGS_MASK,
    );
    expect(
      (configFromForm(apply(form, set('cluster.token', 'a-new-token-0123456789'))).cluster as Record<string, unknown>)
        .token,
    ).toBe('a-new-token-0123456789');
  });

  it('a standalone node becomes a master: role, token, slaves and types as the YAML writes them; the rest untouched', () => {
    const form = apply(
      formFromConfig(CONFIG, SCHEMA),
      set('cluster.role', 'master'),
      set('cluster.token', ' generated-token-0123456789 '),
      { type: 'slave-add' },
      { type: 'slave-set', index: 0, value: 'http://10.0.0.2:8080' },
      { type: 'slave-add' },
      { type: 'slave-add' },
      { type: 'slave-set', index: 2, value: 'http://10.0.0.3:8080' },
      set('cluster.scheduling_backend_depth', '3'),
      set('cluster.offload_probe_idle', '750'),
      set('cluster.offload_restore_delay', '2s'),
      set('cluster.offload_hold_for_faster_helper', false),
      set('redis.url', 'redis://127.0.0.1:6379'),
    );
    const out = configFromForm(form);
    expect(out).toEqual({
      ...CONFIG,
      cluster: {
        ...CONFIG.cluster,
        role: 'master',
        token: 'generated-token-0123456789',
        slave_urls: ['http://10.0.0.2:8080', 'http://10.0.0.3:8080'],
        scheduling_backend_depth: 3,
        offload_probe_idle: 750,
        offload_restore_delay: '2s',
        offload_hold_for_faster_helper: false,
      },
      redis: { url: 'redis://127.0.0.1:6379' },
    });
    expect(CONFIG.cluster).not.toHaveProperty('slave_urls'); // the config read is never changed in place
  });

  it('an emptied field is removed (the node default applies: empty Redis URL = embedded keyspace); slaves removed by row', () => {
    const withRedis = {
      ...CONFIG,
      redis: { url: `redis://:${SETTINGS_MASK}@db:6379` },
      cluster: { ...CONFIG.cluster, slave_urls: ['http://a:1', 'http://b:2'] },
    };
    const form = formFromConfig(withRedis, SCHEMA);
    expect(form.values['redis.url']).toBe(`redis://:${SETTINGS_MASK}@db:6379`);
    const out = configFromForm(apply(form, set('redis.url', '  '), { type: 'slave-remove', index: 0 }));
    expect(out.redis).toEqual({});
    expect((out.cluster as Record<string, unknown>).slave_urls).toEqual(['http://b:2']);
  });

  it('what is not a number goes as typed, for the node to refuse with its field path', () => {
    const out = configFromForm(apply(formFromConfig(CONFIG, SCHEMA), set('server.port', 'eighty')));
    expect((out.server as Record<string, unknown>).port).toBe('eighty');
  });

  it('role options: standalone and master, and slave only for a node that is one', () => {
    expect(roleOptions(formFromConfig(CONFIG, SCHEMA))).toEqual(['standalone', 'master']);
    expect(roleOptions(formFromConfig({ cluster: { role: 'slave' } }, SCHEMA))).toEqual([
      'standalone',
      'master',
      'slave',
    ]);
    expect(formFromConfig({}, SCHEMA).values['cluster.role']).toBe('standalone');
  });
});

describe("settings form: the node's 400 at its field", () => {
  it('maps a param to the field that shows it', () => {
    expect(fieldOfParam('config.server.port')).toBe('server.port');
    expect(fieldOfParam('config.cluster.token')).toBe('cluster.token');
    expect(fieldOfParam('config.cluster.slave_urls.1')).toBe('cluster.slave_urls');
    expect(fieldOfParam('config.redis.url')).toBe('redis.url');
    expect(fieldOfParam('config.cluster.offload_probe_idle')).toBe('cluster.offload_probe_idle');
    // The whole form: the config itself, a field the form does not show, none at all.
    for (const p of ['config', 'config.console.token', 'config.cluster.master_url', null, undefined, ''])
      expect(fieldOfParam(p)).toBeNull();
  });

  it('labels from the JSON Schema the GET returns: description and default', () => {
    expect(fieldFacts(SCHEMA, 'server.port')).toEqual({ default: 8080 });
    expect(fieldFacts(SCHEMA, 'server.max_queue')).toEqual({
      default: 1000,
      description: 'requests that may wait; more get 429',
    });
    expect(fieldFacts(SCHEMA, 'nope.nothing')).toEqual({});
    expect(fieldPlaceholder(SCHEMA, SETTINGS_FIELDS.find((f) => f.path === 'cluster.offload_probe_idle')!)).toBe(
      'default: 5s',
    );
    expect(fieldPlaceholder(SCHEMA, SETTINGS_FIELDS.find((f) => f.path === 'redis.url')!)).toBe('embedded keyspace');
  });
});

describe('settings form: cluster token (ROLE-2)', () => {
  it("hints at a placeholder before sending, for a master only; a masked stored token is the node's to check", () => {
    const form = formFromConfig(CONFIG, SCHEMA);
    expect(formHints(apply(form, set('cluster.token', 'changeme')))).toEqual({}); // standalone needs none
    for (const t of ['', 'changeme', 'Secret', 'short'])
      expect(
        formHints(apply(form, set('cluster.role', 'master'), set('cluster.token', t)))['cluster.token'],
        t,
      ).toMatch(/a master needs/);
    expect(formHints(apply(form, set('cluster.role', 'master'), set('cluster.token', SETTINGS_MASK)))).toEqual({});
    expect(formHints(apply(form, set('cluster.role', 'master'), set('cluster.token', 'a-real-token-0123')))).toEqual(
      {},
    );
  });

  it('Generate makes 32 random bytes as 64 hex characters, never a placeholder, never the same twice', () => {
    const a = generateClusterToken();
    const b = generateClusterToken();
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(a).not.toBe(b);
    expect(isPlaceholderToken(a)).toBe(false);
    // The bytes come from the given source, each as two hex digits.
    expect(generateClusterToken((bytes) => bytes.fill(10))).toBe('0a'.repeat(32));
  });
});

describe('models screen empty state', () => {
  const view = (config: Record<string, unknown>, path = '/home/u/.config/Routerdesk/node.yaml'): SettingsView => ({
    config,
    schema: {},
    path,
    restartError: null,
  });

  it('names the models folder as the node resolves it (relative to the config file)', () => {
    expect(addModelHint(view({ models: { config_dir: './models' } }))).toMatchObject({
      folder: '/home/u/.config/Routerdesk/models',
      configFile: '/home/u/.config/Routerdesk/node.yaml',
    });
    expect(addModelHint(view({ models: { config_dir: '/srv/models' } })).folder).toBe('/srv/models');
    expect(addModelHint(view({}))).toMatchObject({ folder: null, configFile: '/home/u/.config/Routerdesk/node.yaml' });
    expect(addModelHint(null)).toMatchObject({ folder: null, configFile: null });
    expect(resolveFromConfig('C:\\Users\\u\\Routerdesk\\node.yaml', 'models')).toBe('C:\\Users\\u\\Routerdesk\\models');
    expect(resolveFromConfig('/etc/node.yaml', '.')).toBe('/etc');
  });
});

describe("a master's slaves on the Settings screen", () => {
  const node = (nodeId: string, url: string | null, healthy: boolean, local = false): ClusterNodeView => ({
    nodeId,
    url,
    role: local ? 'master' : 'slave',
    local,
    healthy,
    lastSeen: null,
    lastError: healthy ? null : 'connect ECONNREFUSED',
    version: null,
    settingsHash: null,
    models: 1,
  });

  it('every configured slave with its health, "not polled yet" until the master did; other members after', () => {
    const nodes = [
      node('desk', 'http://127.0.0.1:1', true, true),
      node('gpu-a', 'http://10.0.0.2:8080/', true),
      node('gpu-c', 'http://10.0.0.9:8080', false),
    ];
    expect(slaveRows(nodes, ['http://10.0.0.2:8080', 'http://10.0.0.3:8080'])).toEqual([
      { key: 'gpu-a', nodeId: 'gpu-a', url: 'http://10.0.0.2:8080', health: 'healthy', tone: 'ok', lastError: null },
      {
        key: 'http://10.0.0.3:8080',
        nodeId: '—',
        url: 'http://10.0.0.3:8080',
        health: 'not polled yet',
        tone: 'idle',
        lastError: null,
      },
      {
        key: 'gpu-c',
        nodeId: 'gpu-c',
        url: 'http://10.0.0.9:8080',
        health: 'unreachable',
        tone: 'bad',
        lastError: 'connect ECONNREFUSED',
      },
    ]);
    expect(slaveRows(null, [])).toEqual([]);
  });
});

describe('Settings: the folders the Add model dialog may browse', () => {
  it('models.browse_dirs is edited one folder a line and written as a list; emptied, the key is removed', () => {
    const form = formFromConfig({ ...CONFIG, models: { config_dir: './models', browse_dirs: ['/srv/a'] } }, SCHEMA);
    expect(form.values['models.browse_dirs']).toBe('/srv/a');
    const two = settingsFormReducer(form, {
      type: 'field',
      path: 'models.browse_dirs',
      value: '/srv/a\n  /srv/b  \n\n',
    });
    expect((configFromForm(two).models as Record<string, unknown>).browse_dirs).toEqual(['/srv/a', '/srv/b']);
    const none = settingsFormReducer(form, { type: 'field', path: 'models.browse_dirs', value: '' });
    expect((configFromForm(none).models as Record<string, unknown>).browse_dirs).toBeUndefined();
    expect(fieldOfParam('config.models.browse_dirs.1')).toBe('models.browse_dirs');
  });
});
