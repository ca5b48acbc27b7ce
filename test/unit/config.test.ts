import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  ConfigError,
  checkRole,
  configJsonSchemas,
  formatDuration,
  loadNodeConfig,
  parseDuration,
  parseModelConfig,
  parseNodeConfig,
} from '../../src-router/config';
import { readModelConfigFolder } from '../../src-router/config/model-config-files';

const ROOT = new URL('../..', import.meta.url).pathname;

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('durations', () => {
  it.each([
    ['5s', 5000],
    ['1.5s', 1500],
    ['3m', 180_000],
    ['14d', 1_209_600_000],
    ['250ms', 250],
    ['2h', 7_200_000],
    ['750', 750],
    [1200, 1200],
    [' 2s ', 2000],
  ] as const)('%s → %d ms', (input, ms) => expect(parseDuration(input)).toBe(ms));

  it.each(['', 'abc', '5 sec', '-1s', '1e3', 's'])('rejects %j', (input) =>
    expect(parseDuration(input)).toBeUndefined(),
  );

  it('formats back the way the spec writes them', () => {
    expect([5000, 1500, 180_000, 1_209_600_000, 250].map(formatDuration)).toEqual(['5s', '1.5s', '3m', '14d', '250ms']);
  });
});

describe('node config', () => {
  it('has the spec defaults', () => {
    const c = parseNodeConfig({});
    expect(c.cluster).toMatchObject({
      role: 'standalone',
      scheduling_backend_depth: 2,
      offload_probe_idle: 5000,
      offload_restore_delay: 1500,
      offload_lent_stall_timeout: 180_000,
      offload_hold_for_faster_helper: true,
    });
    expect(c.backend.mode).toBe('llama_sdcpp');
    expect(c.routing.routing_key).toBe('clutchcall:inference:routing');
  });

  it('reads durations as written', () => {
    const c = parseNodeConfig({
      cluster: { sync_interval: '1.5s', offload_decisions_retention: '3d', health_interval: 250 },
    });
    expect([c.cluster.sync_interval, c.cluster.offload_decisions_retention, c.cluster.health_interval]).toEqual([
      1500, 259_200_000, 250,
    ]);
  });

  it('fails on unknown keys and wrong types, naming every field path', () => {
    const err = configError(() =>
      parseNodeConfig(
        { server: { port: 'eighty' }, cluster: { rol: 'master', sync_interval: 'soon' }, extra: 1 },
        'node.yaml',
      ),
    );
    const paths = err.issues.map((i) => i.path);
    expect(paths).toEqual(expect.arrayContaining(['server.port', 'cluster', 'cluster.sync_interval', '(root)']));
    expect(err.message).toContain('node.yaml');
    expect(err.message).toMatch(/cluster: unknown key "rol"/);
    expect(err.message).toMatch(/cluster.sync_interval: not a duration: "soon"/);
  });

  it('a duration a timer waits for is at most 24 days; spans that only bound a query may be longer (issue #9)', () => {
    const err = configError(() => parseNodeConfig({ cluster: { request_timeout: '25d' } }));
    expect(err.issues[0].path).toBe('cluster.request_timeout');
    expect(err.message).toMatch(/too long: "25d"/);
    expect(
      parseNodeConfig({ cluster: { request_timeout: '24d', offload_decisions_retention: '400d' } }).cluster
        .offload_decisions_retention,
    ).toBe(400 * 86_400_000);
  });

  it('rejects a bad enum value with its path', () => {
    const err = configError(() => parseNodeConfig({ backend: { mode: 'ollama' } }));
    expect(err.issues[0].path).toBe('backend.mode');
  });

  it('resolves relative folders against the config file', () => {
    const c = parseNodeConfig(
      { cluster: { store_dir: './store' }, models: { config_dir: 'models' } },
      'x',
      '/etc/routerdesk',
    );
    expect(c.cluster.store_dir).toBe('/etc/routerdesk/store');
    expect(c.models.config_dir).toBe('/etc/routerdesk/models');
    expect(c.models.shared_dir).toBe('');
  });

  it('reports unreadable and invalid YAML files clearly', () => {
    expect(configError(() => loadNodeConfig('/nonexistent/node.yaml')).message).toMatch(/cannot read/);
  });
});

describe('role checks (ROLE-2, ROLE-3)', () => {
  it.each(['', 'changeme', 'secret', 'token', 'short'])('a master refuses the placeholder token %j', (token) => {
    const err = configError(() => checkRole(parseNodeConfig({ cluster: { role: 'master', token } })));
    expect(err.issues[0].path).toBe('cluster.token');
  });

  it('a slave needs master_url and public_url', () => {
    const err = configError(() =>
      checkRole(parseNodeConfig({ cluster: { role: 'slave', token: 'a-real-shared-token' } })),
    );
    expect(err.issues.map((i) => i.path)).toEqual(['cluster.master_url', 'cluster.public_url']);
  });

  it('standalone needs no token', () => {
    expect(() => checkRole(parseNodeConfig({}))).not.toThrow();
  });
});

describe('model config', () => {
  it('parses a full config with engine options and resolves the weights path', () => {
    const c = parseModelConfig(
      {
        name: 'm',
        backend: 'sim',
        capabilities: ['text'],
        model: 'w.gguf',
        sim: { load_time: '1s', fail: 'http_500' },
        vllm: { settings: { max_model_length: 4096 } },
      },
      'm.yaml',
      '/models',
    );
    expect(c.model).toBe('/models/w.gguf');
    expect(c.sim).toMatchObject({ load_time: 1000, token_time: 5, fail: 'http_500', time_scale: 1 });
    expect(c.vllm?.settings.max_model_length).toBe(4096);
  });

  it('ttl: an optional idle-unload duration, bounded like every timer (issue #11)', () => {
    expect(parseModelConfig({ name: 'm', backend: 'sim', ttl: '5m' }, 'm.yaml', '/').ttl).toBe(300_000);
    expect(parseModelConfig({ name: 'm', backend: 'sim' }, 'm.yaml', '/').ttl).toBeUndefined();
    expect(
      configError(() => parseModelConfig({ name: 'm', backend: 'sim', ttl: 'soon' }, 'm.yaml', '/')).issues.map(
        (i) => i.path,
      ),
    ).toEqual(['ttl']);
    expect(
      configError(() => parseModelConfig({ name: 'm', backend: 'sim', ttl: '30d' }, 'm.yaml', '/')).message,
    ).toMatch(/ttl: too long/);
  });

  it('names the bad field of a model config', () => {
    const err = configError(() =>
      parseModelConfig({ name: 'm', backend: 'ollama', capabilities: ['smell'], contextsize: -1 }, 'm.yaml', '/'),
    );
    expect(err.issues.map((i) => i.path).sort()).toEqual(['backend', 'capabilities.0', 'contextsize']);
  });
});

describe('shipped examples and JSON Schemas', () => {
  const examples = join(ROOT, 'resources', 'examples');

  it('every example node config parses', () => {
    const files = readdirSync(examples).filter((f) => f.endsWith('.yaml'));
    expect(files.length).toBeGreaterThanOrEqual(3);
    for (const f of files) {
      const config = loadNodeConfig(join(examples, f));
      if (config.cluster.role !== 'standalone') expect(() => checkRole(config)).not.toThrow();
    }
  });

  it('every example model config parses', () => {
    const models = readModelConfigFolder(join(examples, 'models'));
    expect(models.length).toBeGreaterThanOrEqual(5);
    expect(models.filter((m) => m.error)).toEqual([]);
    expect(models.map((m) => m.localId)).toContain('sim-chat');
  });

  it('the shipped JSON Schemas are the ones the zod schemas generate (run `routerdesk schema` after a change)', () => {
    for (const [name, schema] of Object.entries(configJsonSchemas())) {
      const shipped = JSON.parse(readFileSync(join(ROOT, 'resources', 'schema', name), 'utf8'));
      expect(shipped, name).toEqual(JSON.parse(JSON.stringify(schema)));
    }
  });

  it('the schema knows every section and rejects extra keys', () => {
    const schema = configJsonSchemas()['node-config.schema.json'] as {
      properties: Record<string, unknown>;
      additionalProperties: boolean;
    };
    expect(Object.keys(schema.properties).sort()).toEqual([
      'backend',
      'cluster',
      'console',
      'models',
      'redis',
      'routing',
      'server',
    ]);
    expect(schema.additionalProperties).toBe(false);
    expect(parse(readFileSync(join(examples, 'node.master.yaml'), 'utf8')).cluster.role).toBe('master');
  });
});
