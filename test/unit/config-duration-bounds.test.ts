import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { ConfigError, loadNodeConfig, parseModelConfig, parseNodeConfig } from '../../src-router/config';

// Issue #37 item 9: a 0 ms or 1 ms interval made the node start and then spin a core. Every interval, period and
// timeout of the node config has a floor (and the loops a ceiling), refused with the field path.

/** Every duration setting a timer or a loop waits for, with its floor (ms) and, for loops, its ceiling. */
const BOUNDED: [string, number, number | null][] = [
  ['server.write_timeout', 1000, null],
  ['server.headers_timeout', 1000, null],
  ['server.request_timeout', 1000, null],
  ['server.keep_alive_timeout', 1000, null],
  ['cluster.sync_interval', 100, 3_600_000],
  ['cluster.health_interval', 100, 3_600_000],
  ['cluster.request_timeout', 1000, null],
  ['cluster.scheduling_refresh_interval', 100, 3_600_000],
  ['cluster.scheduling_sample_window', 60_000, null],
  ['cluster.offload_lent_stall_timeout', 1000, null],
  ['cluster.offload_decisions_retention', 60_000, null],
  ['backend.load_timeout', 1000, null],
  ['backend.health_interval', 100, 3_600_000],
  ['backend.health_timeout', 100, 3_600_000],
  ['console.remote_timeout', 1000, null],
  ['routing.poll_interval', 100, 3_600_000],
  ['routing.scrape_interval', 100, 3_600_000],
];

const at = (path: string, value: unknown) => {
  const [section, key] = path.split('.');
  return { [section]: { [key]: value } };
};

function refusal(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('every interval, period and timeout has a floor (and loops a ceiling), refused at its field', () => {
  it.each(BOUNDED)('%s: 0 ms and 1 ms are refused with the field path; the floor itself is taken', (path, min, max) => {
    for (const value of ['0ms', 1, '1ms', min - 1]) {
      const err = refusal(() => parseNodeConfig(at(path, value)));
      expect(err.issues).toEqual([
        { path, message: expect.stringMatching(/^too short: .* \(at least \d+(ms|s|m)\)$/) },
      ]);
      expect(err.message).toContain(`${path}: too short`);
    }
    const [section, key] = path.split('.');
    const parsed = parseNodeConfig(at(path, min)) as unknown as Record<string, Record<string, number>>;
    expect(parsed[section][key]).toBe(min);
    if (max !== null) {
      const err = refusal(() => parseNodeConfig(at(path, max + 1)));
      expect(err.issues[0]).toEqual({ path, message: expect.stringMatching(/^too long: .*\(at most 1h\)$/) });
      expect((parseNodeConfig(at(path, '1h')) as unknown as Record<string, Record<string, number>>)[section][key]).toBe(
        max,
      );
    }
  });

  it('the defaults are inside their bounds', () => {
    expect(() => parseNodeConfig({})).not.toThrow();
  });

  it("a model config's load_timeout has a floor too", () => {
    const err = refusal(() => parseModelConfig({ name: 'm', backend: 'sim', load_timeout: '5ms' }, 'm.yaml', '/'));
    expect(err.issues[0].path).toBe('load_timeout');
    expect(err.message).toMatch(/load_timeout: too short: "5ms" \(at least 1s\)/);
  });

  const dir = mkdtempSync(join(tmpdir(), 'routerdesk-bounds-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('the config loader refuses a file with a 1 ms interval, naming the file and the field', () => {
    const file = join(dir, 'node.yaml');
    writeFileSync(file, stringify({ cluster: { scheduling_refresh_interval: '1ms' }, routing: { poll_interval: 0 } }));
    const err = refusal(() => loadNodeConfig(file));
    expect(err.message).toContain(file);
    expect(err.issues.map((i) => i.path).sort()).toEqual([
      'cluster.scheduling_refresh_interval',
      'routing.poll_interval',
    ]);
  });
});
