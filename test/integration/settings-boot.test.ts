import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { healthAnswerSchema, settingsViewSchema } from '../../src-router/contract';
import { simText } from '../support/lending-cluster';
import { eventually, startNode, TEST_CONSOLE_TOKEN, type TestNode } from '../support/node-harness';

// A Settings save whose config cannot start: what start-up needs is checked before anything is written (a 400 at
// the field: a missing or unreadable folder, an unreadable file, a port another process holds), and a start that
// fails anyway gives back what it took, puts the previous file back from .bak and runs on it, and says so.

type Config = Record<string, Record<string, unknown>>;

/** Root reads any file: the unreadable cases run the node as `nobody`, for whom permissions hold. */
const AS_USER = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : undefined;

describe('issue #26 item 2: a Settings save that cannot start never takes the node down', () => {
  let node: TestNode;
  let file: string;
  let before: string;

  beforeAll(async () => {
    node = await startNode({ models: { m: simText('model-m', '5ms') }, user: AS_USER });
    file = join(node.dir, 'node.yaml');
    before = readFileSync(file, 'utf8');
  });
  afterAll(async () => {
    await node?.stop();
  });

  const call = (method: 'GET' | 'PUT', body?: unknown) =>
    fetch(`${node.url}/router/v1/console/settings`, {
      method,
      headers: {
        authorization: `Bearer ${TEST_CONSOLE_TOKEN}`,
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });
  const view = async () => settingsViewSchema.parse(await (await call('GET')).json());
  const startedAt = async () => healthAnswerSchema.parse(await (await fetch(`${node.url}/health`)).json()).started_at;
  /** PUTs the config read with `patch` applied to its sections; the answer's status and error. */
  const put = async (patch: (c: Config) => void) => {
    const config = (await view()).config as Config;
    patch(config);
    const res = await call('PUT', { config });
    return {
      status: res.status,
      body: (await res.json()) as { error?: { param: string; message: string; code: string }; written?: boolean },
    };
  };
  /** Handed to the node's user, when the node runs as another. */
  const own = (path: string) => AS_USER && execFileSync('chown', ['-R', `${AS_USER.uid}:${AS_USER.gid}`, path]);

  const expectRefusedAt = async (param: string, patch: (c: Config) => void, message: RegExp) => {
    const started = await startedAt();
    const { status, body } = await put(patch);
    expect(status, JSON.stringify(body)).toBe(400);
    expect(body.error).toMatchObject({ param, code: 'config_cannot_start', message: expect.stringMatching(message) });
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect(existsSync(`${file}.bak`)).toBe(false);
    expect(await startedAt()).toBe(started); // never restarted
  };

  it('issue #26 item 2: a models folder that does not exist or is a file is a 400 at config.models.config_dir', async () => {
    await expectRefusedAt(
      'config.models.config_dir',
      (c) => (c.models.config_dir = join(node.dir, 'no-such-folder')),
      /no-such-folder does not exist/,
    );
    writeFileSync(join(node.dir, 'a-file'), 'x');
    await expectRefusedAt(
      'config.models.config_dir',
      (c) => (c.models.config_dir = join(node.dir, 'a-file')),
      /is not a folder/,
    );
  });

  it('issue #26 item 2: an API keys file that is no regular file (a FIFO, a device) is a 400 at config.server.api_keys_file, and the node never stops answering', async () => {
    // Reading a FIFO with no writer blocks the reader; reading /dev/zero never ends: the check must not read either.
    const fifo = join(node.dir, 'keys.fifo');
    execFileSync('mkfifo', [fifo]);
    own(fifo);
    await expectRefusedAt(
      'config.server.api_keys_file',
      (c) => (c.server.api_keys_file = fifo),
      /keys\.fifo is not a regular file/,
    );
    await expectRefusedAt(
      'config.server.api_keys_file',
      (c) => (c.server.api_keys_file = '/dev/zero'),
      /\/dev\/zero is not a regular file/,
    );
  });

  it.runIf(AS_USER || process.getuid?.() !== 0)(
    'issue #26 item 2: an unreadable folder or file is a 400 at its field',
    async () => {
      const locked = join(node.dir, 'locked-models');
      mkdirSync(locked);
      own(locked);
      chmodSync(locked, 0o000);
      await expectRefusedAt('config.models.config_dir', (c) => (c.models.config_dir = locked), /permission denied/);
      const keys = join(node.dir, 'keys.txt');
      writeFileSync(keys, 'client-key-0123456789abcdef\n');
      own(keys);
      chmodSync(keys, 0o000);
      await expectRefusedAt('config.server.api_keys_file', (c) => (c.server.api_keys_file = keys), /EACCES/);
      const store = join(node.dir, 'locked-store');
      mkdirSync(store);
      own(store);
      chmodSync(store, 0o500);
      await expectRefusedAt(
        'config.cluster.store_dir',
        (c) => (c.cluster.store_dir = join(store, 'inner')),
        /cannot be written/,
      );
    },
  );

  it('issue #26 item 2: a port another process listens on is a 400 at config.server.port, an address this machine lacks one at config.server.host', async () => {
    const other: Server = createServer();
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
    const port = (other.address() as { port: number }).port;
    try {
      await expectRefusedAt(
        'config.server.port',
        (c) => (c.server.port = port),
        new RegExp(`port ${port} on 127.0.0.1 is in use by another process`),
      );
    } finally {
      await new Promise((r) => other.close(r));
    }
    await expectRefusedAt('config.server.host', (c) => (c.server.host = '192.0.2.1'), /cannot listen on 192\.0\.2\.1/);
  });

  it('issue #26 item 2: a start that fails past the checks puts the previous file back and runs on it, on the same port and store, and says so', async () => {
    // A store folder whose store a newer build wrote: the folder can be written, the start refuses the store — after
    // it took the new store's lock.
    const newer = join(node.dir, 'newer-store');
    mkdirSync(newer);
    const db = new Database(join(newer, 'router.db'));
    db.exec(
      'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)',
    );
    db.prepare('INSERT INTO schema_migrations VALUES (?, ?, ?)').run(99_999, 'from a newer build', Date.now());
    db.close();
    own(newer);
    const started = await startedAt();
    const { status, body } = await put((c) => (c.cluster.store_dir = newer));
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({ written: true });
    await eventually(async () => (await startedAt()) !== started, {
      what: 'the node back after the failed start',
      timeoutMs: 20_000,
    });
    const v = await view();
    expect(v.restartError).toMatch(/store schema version 99999 is newer than this build knows/);
    expect(v.restoredFrom).toBe(`${file}.bak`);
    expect((v.config as Config).cluster.store_dir).toBe(join(node.dir, 'store'));
    expect(readFileSync(file, 'utf8')).toBe(before);
    // Up on the previous config: its model answers, and the process never exited.
    const chat = await fetch(`${node.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'model-m', max_tokens: 2, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(chat.status).toBe(200);
    expect(node.proc.exitCode).toBeNull();
    expect(node.output()).not.toMatch(/StoreLockedError|already open in this process/);
    expect(node.output()).toMatch(/restored from .*node\.yaml\.bak/);
  });
});

describe('issue #28: a Settings save of a models folder that holds invalid model configs is no start-up problem', () => {
  let node: TestNode;
  beforeAll(async () => {
    node = await startNode({ models: { m: simText('model-m', '5ms') }, user: AS_USER });
  });
  afterAll(async () => {
    await node?.stop();
  });
  const auth = { authorization: `Bearer ${TEST_CONSOLE_TOKEN}` };
  const startedAt = async () => healthAnswerSchema.parse(await (await fetch(`${node.url}/health`)).json()).started_at;

  it('a folder holding a bad field, an unreadable file and a FIFO is saved: the node restarts on it, serves the good model and lists each bad file with its error', async () => {
    const models = join(node.dir, 'odd-models');
    mkdirSync(models);
    writeFileSync(join(models, 'ok.yaml'), stringify(simText('model-ok', '5ms')));
    writeFileSync(join(models, 'typo.yaml'), stringify({ ...simText('model-typo', '5ms'), parallel: 'two' }));
    writeFileSync(join(models, 'locked.yaml'), stringify(simText('model-locked', '5ms')));
    // A FIFO named like a model config: a read would block, so it is never opened.
    execFileSync('mkfifo', [join(models, 'pipe.yaml')]);
    if (AS_USER) execFileSync('chown', ['-R', `${AS_USER.uid}:${AS_USER.gid}`, models]);
    const unreadable = AS_USER !== undefined || process.getuid?.() !== 0;
    if (unreadable) chmodSync(join(models, 'locked.yaml'), 0o000);
    const started = await startedAt();
    const { config } = settingsViewSchema.parse(
      await (await fetch(`${node.url}/router/v1/console/settings`, { headers: auth })).json(),
    ) as { config: Config };
    config.models.config_dir = models;
    const res = await fetch(`${node.url}/router/v1/console/settings`, {
      method: 'PUT',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ config }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    await eventually(async () => (await startedAt().catch(() => started)) !== started, {
      what: 'the node restarted on the new folder',
      timeoutMs: 20_000,
    });
    const v = settingsViewSchema.parse(
      await (await fetch(`${node.url}/router/v1/console/settings`, { headers: auth })).json(),
    );
    expect(v.restartError ?? null).toBeNull();
    expect((v.config as Config).models.config_dir).toBe(models);
    const served = ((await (await fetch(`${node.url}/v1/models`)).json()) as { data: { id: string }[] }).data.map(
      (m) => m.id,
    );
    expect(served).toEqual(['model-ok']);
    const { configs } = (await (
      await fetch(`${node.url}/router/v1/console/model-configs`, { headers: auth })
    ).json()) as { configs: { file: string; error: { path: string } | null; in_force: unknown }[] };
    const at = (f: string) => configs.find((c) => c.file === join(models, f));
    expect(at('typo.yaml')).toMatchObject({ error: { path: 'parallel' }, in_force: null });
    expect(at('pipe.yaml')).toMatchObject({ error: { path: '(file)' }, in_force: null });
    if (unreadable) expect(at('locked.yaml')).toMatchObject({ error: { path: '(file)' }, in_force: null });
    expect(node.proc.exitCode).toBeNull();
  });

  it('a Settings change of models.config_dir while running: the new folder is watched, the old one no longer (no fs.watch handle left behind)', async () => {
    // The inotify watches the node process holds (fs.watch on Linux): one per watched folder.
    const watches = () =>
      readdirSync(`/proc/${node.proc.pid}/fdinfo`).reduce((n, fd) => {
        try {
          return n + (readFileSync(`/proc/${node.proc.pid}/fdinfo/${fd}`, 'utf8').match(/^inotify wd:/gm)?.length ?? 0);
        } catch {
          return n;
        }
      }, 0);
    const auth = { authorization: `Bearer ${TEST_CONSOLE_TOKEN}` };
    const move = async (dir: string) => {
      const started = await startedAt();
      const { config } = settingsViewSchema.parse(
        await (await fetch(`${node.url}/router/v1/console/settings`, { headers: auth })).json(),
      ) as { config: Config };
      config.models.config_dir = dir;
      const res = await fetch(`${node.url}/router/v1/console/settings`, {
        method: 'PUT',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ config }),
      });
      expect(res.status, await res.clone().text()).toBe(200);
      await eventually(async () => (await startedAt().catch(() => started)) !== started, {
        what: `the node restarted on ${dir}`,
        timeoutMs: 20_000,
      });
    };
    const served = async () =>
      ((await (await fetch(`${node.url}/v1/models`)).json()) as { data: { id: string }[] }).data
        .map((m) => m.id)
        .sort();
    const a = join(node.dir, 'folder-a');
    const b = join(node.dir, 'folder-b');
    for (const d of [a, b]) {
      mkdirSync(d);
      if (AS_USER) execFileSync('chown', ['-R', `${AS_USER.uid}:${AS_USER.gid}`, d]);
    }
    for (const d of [a, b, a, b]) await move(d);
    await eventually(() => watches() === 1, { what: 'one watched folder' });
    // A config written into the folder no longer configured changes nothing; one in the folder in force is served.
    writeFileSync(join(a, 'old.yaml'), stringify(simText('old-folder-model', '5ms')));
    writeFileSync(join(b, 'new.yaml'), stringify(simText('new-folder-model', '5ms')));
    if (AS_USER) execFileSync('chown', ['-R', `${AS_USER.uid}:${AS_USER.gid}`, a, b]);
    await eventually(async () => (await served()).includes('new-folder-model'), { what: "the new folder's model" });
    expect(await served()).toEqual(['new-folder-model']);
    expect(watches()).toBe(1);
  });
});
