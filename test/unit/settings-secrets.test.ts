import {
  existsSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  ConfigError,
  maskSecrets,
  restoreConfigBackup,
  unmaskSecrets,
  writeConfigFile,
} from '../../src-router/config/settings-file';
import { SETTINGS_MASK } from '../../src-router/contract';

// The node's Settings secrets: a masked secret stays with its destination, list secrets are named by identity, and
// the config file is written durably under a temp name of its own.

type Json = Record<string, unknown>;

const STORED: Json = {
  cluster: {
    role: 'master',
    token: 'stored-cluster-token-0123456789',
    slave_urls: ['http://10.0.0.2:8080', 'http://10.0.0.3:8080'],
  },
  console: {
    token: 'stored-console-token-0123456789',
    operators: ['operator-one-token-0123456789', 'operator-two-token-0123456789'],
  },
  server: { api_keys: ['client-key-aaaa-0123456789', 'client-key-bbbb-0123456789'] },
  redis: { url: 'redis://app:redis-pass-0123@db-a:6379/0' },
};

/** The error path of a refused unmask, or 'kept' with the result. */
function refusal(incoming: Json, current: Json = STORED): { path: string; message: string } {
  try {
    unmaskSecrets(incoming, current);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).issues[0];
  }
  throw new Error('not refused');
}

const shown = () => maskSecrets(STORED) as Record<string, Json>;

describe('issue #26 item 8: a masked secret stays with its destination', () => {
  it('issue #26 item 8: a masked cluster token is refused when a new slave URL or master_url appears; kept for the same or fewer', () => {
    const v = shown();
    expect(v.cluster.token).toBe(SETTINGS_MASK);
    const addSlave = {
      ...v,
      cluster: { ...v.cluster, slave_urls: ['http://10.0.0.2:8080', 'http://evil.example:8080'] },
    };
    expect(refusal(addSlave)).toMatchObject({
      path: 'cluster.token',
      message: expect.stringMatching(/evil\.example.*give the secret again for the new destination/),
    });
    const toSlave = {
      ...v,
      cluster: {
        ...v.cluster,
        role: 'slave',
        slave_urls: [],
        master_url: 'http://other-master:8080',
        public_url: 'http://me:8080',
      },
    };
    expect(refusal(toSlave).path).toBe('cluster.token');
    // The master's own public URL is where slaves reach its guardian with the token.
    const moved = { ...v, cluster: { ...v.cluster, public_url: 'http://evil.example:8080' } };
    expect(refusal(moved)).toMatchObject({ path: 'cluster.token', message: expect.stringMatching(/evil\.example/) });
    // A removed slave gets nothing new; the same URL spelt with a trailing slash is the same destination.
    const fewer = { ...v, cluster: { ...v.cluster, slave_urls: ['http://10.0.0.3:8080/'] } };
    expect((unmaskSecrets(fewer, STORED).cluster as Json).token).toBe('stored-cluster-token-0123456789');
    // A token given again goes anywhere.
    const given = { ...addSlave, cluster: { ...addSlave.cluster, token: 'new-cluster-token-0123456789' } };
    expect((unmaskSecrets(given, STORED).cluster as Json).token).toBe('new-cluster-token-0123456789');
  });

  it('issue #26 item 8: a masked Redis password is refused for another host or port, kept for the same server', () => {
    const v = shown();
    expect(v.redis.url).toBe(`redis://app:${SETTINGS_MASK}@db-a:6379/0`);
    for (const url of [
      `redis://app:${SETTINGS_MASK}@db-b:6379/0`,
      `redis://app:${SETTINGS_MASK}@db-a:6380/0`,
      `rediss://app:${SETTINGS_MASK}@db-a:6379/0`,
      `redis://app:${SETTINGS_MASK}@db-a:6379/0?path=/tmp/trap.sock`,
      `redis://app:${SETTINGS_MASK}@db-a:6379/0?port=1`,
    ]) {
      expect(refusal({ ...v, redis: { url } }), url).toMatchObject({
        path: 'redis.url',
        message: expect.stringMatching(/give the secret again for the new destination/),
      });
    }
    // The mask stands for the password only, never moved into the user name or host.
    expect(refusal({ ...v, redis: { url: `redis://${SETTINGS_MASK}@db-a:6379/0` } }).path).toBe('redis.url');
    expect(
      (unmaskSecrets({ ...v, redis: { url: `redis://app:${SETTINGS_MASK}@db-a:6379/2` } }, STORED).redis as Json).url,
    ).toBe('redis://app:redis-pass-0123@db-a:6379/2');
    expect(
      refusal({ redis: { url: `redis://app:${SETTINGS_MASK}@db-a:6379/0` } }, { redis: { url: 'redis://db-a:6379' } })
        .path,
    ).toBe('redis.url'); // none stored
  });

  it('issue #26 item 8: list secrets are edited by identity: a deleted or moved item keeps the right secret; an unknown mask is refused at its index', () => {
    const v = shown();
    const [one, two] = v.console.operators as string[];
    expect(one.startsWith(SETTINGS_MASK) && one !== two).toBe(true);
    expect(JSON.stringify(v)).not.toMatch(/operator-one|operator-two|client-key|stored-|redis-pass/);
    // Deleting item 0 of two keeps item 1.
    expect(
      (unmaskSecrets({ ...v, console: { ...v.console, operators: [two] } }, STORED).console as Json).operators,
    ).toEqual(['operator-two-token-0123456789']);
    const keys = v.server.api_keys as string[];
    expect(
      (
        unmaskSecrets({ ...v, server: { api_keys: [keys[1], 'client-key-cccc-0123456789', keys[0]] } }, STORED)
          .server as Json
      ).api_keys,
    ).toEqual(['client-key-bbbb-0123456789', 'client-key-cccc-0123456789', 'client-key-aaaa-0123456789']);
    // The bare mask (by position, as before) names nothing; neither does a mask of an item no longer stored.
    expect(refusal({ ...v, console: { ...v.console, operators: [SETTINGS_MASK] } }).path).toBe('console.operators.0');
    const changedMeanwhile = {
      ...STORED,
      console: { ...(STORED.console as Json), operators: ['operator-three-token-0123456789'] },
    };
    expect(refusal({ ...v, console: { ...v.console, operators: [one] } }, changedMeanwhile).path).toBe(
      'console.operators.0',
    );
    // The mask is stable across reads.
    expect(shown().console.operators).toEqual(v.console.operators);
  });
});

describe('issue #26 item 11: the config file is written durably under a temp name of its own', () => {
  it('issue #26 item 11: a link planted at the old fixed temp name or at .bak is never written through; .bak kept; both owner-only', () => {
    const dir = mkdtempSync(join(tmpdir(), 'routerdesk-write-'));
    const file = join(dir, 'node.yaml');
    writeFileSync(file, 'server:\n  port: 1\n');
    const elsewhere = join(dir, 'elsewhere.txt');
    symlinkSync(elsewhere, `${file}.tmp-${process.pid}`);
    const bakTarget = join(dir, 'bak-elsewhere.txt');
    symlinkSync(bakTarget, `${file}.bak`);
    writeConfigFile(file, { server: { port: 2 } });
    expect(existsSync(elsewhere)).toBe(false);
    expect(existsSync(bakTarget)).toBe(false);
    expect(statSync(`${file}.bak`).mode & 0o777).toBe(0o600);
    expect(parse(readFileSync(file, 'utf8'))).toEqual({ server: { port: 2 } });
    expect(readFileSync(`${file}.bak`, 'utf8')).toBe('server:\n  port: 1\n');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(lstatSync(`${file}.tmp-${process.pid}`).isSymbolicLink()).toBe(true); // left alone
    expect(readdirSync(dir).filter((n) => n.includes('.tmp-') && !n.endsWith(`.tmp-${process.pid}`))).toEqual([]);
    // The .bak goes back as the config.
    expect(restoreConfigBackup(file)).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe('server:\n  port: 1\n');
    expect(restoreConfigBackup(join(dir, 'none.yaml'))).toBe(false);
  });
});
