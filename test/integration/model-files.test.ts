import { execFileSync } from 'node:child_process';
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modelFileInspectionSchema, modelFileListSchema } from '../../src-router/contract';
import { runCli, startNode, TEST_CONSOLE_TOKEN, type TestNode, tempDir } from '../support/node-harness';

// The Add model dialog's file browser on a real node: listing and GGUF inspection only inside models.shared_dir,
// models.config_dir and models.browse_dirs, by real path (symlinks, `..`, encodings), operators only.

const OPERATOR = 'operator-token-0123456789abcdef';

/** A GGUF file with these metadata and no tensors (u32 numbers, strings, and string arrays). */
function tinyGguf(meta: Record<string, number | string | string[]>): Buffer {
  const parts: Buffer[] = [];
  const u32 = (n: number) => {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(n);
    parts.push(b);
  };
  const u64 = (n: number) => {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(n));
    parts.push(b);
  };
  const str = (s: string) => {
    u64(Buffer.byteLength(s));
    parts.push(Buffer.from(s));
  };
  u32(0x46554747);
  u32(3);
  u64(0);
  u64(Object.keys(meta).length);
  for (const [k, v] of Object.entries(meta)) {
    str(k);
    if (typeof v === 'number') {
      u32(4);
      u32(v);
    } else if (typeof v === 'string') {
      u32(8);
      str(v);
    } else {
      u32(9);
      u32(8);
      u64(v.length);
      v.forEach(str);
    }
  }
  return Buffer.concat(parts);
}

describe('model files: browse and inspect inside the folders the node may read', () => {
  let node: TestNode;
  let area: string;
  let browse: string;
  let shared: string;
  let outside: string;
  let chat: string;

  const call = (path: string, token = OPERATOR, body?: unknown) =>
    fetch(`${node.url}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const list = (dir?: string, token?: string) =>
    call(`/router/v1/console/model-files${dir === undefined ? '' : `?dir=${encodeURIComponent(dir)}`}`, token);
  const inspect = (path: string, token?: string) => call('/router/v1/console/model-files/inspect', token, { path });

  beforeAll(async () => {
    area = realpathSync(tempDir('routerdesk-model-files-'));
    browse = join(area, 'ggufs');
    shared = join(area, 'shared');
    outside = join(area, 'outside');
    for (const d of [browse, shared, outside, join(browse, 'sub')]) mkdirSync(d, { recursive: true });
    chat = join(browse, 'chat.gguf');
    const made = await runCli(['make-model', chat]);
    expect(made.code, made.stderr).toBe(0);
    writeFileSync(join(browse, 'notes.txt'), 'not a model');
    writeFileSync(
      join(browse, 'nomic-embed.gguf'),
      tinyGguf({
        'general.architecture': 'nomic-bert',
        'nomic-bert.context_length': 2048,
        'nomic-bert.pooling_type': 1,
        'tokenizer.ggml.tokens': ['a', 'b', 'c'],
      }),
    );
    mkdirSync(join(browse, 'vision'));
    writeFileSync(
      join(browse, 'vision', 'gemma.gguf'),
      tinyGguf({ 'general.architecture': 'gemma3', 'general.name': 'Gemma', 'gemma3.context_length': 131072 }),
    );
    writeFileSync(
      join(browse, 'vision', 'mmproj-gemma-f16.gguf'),
      tinyGguf({ 'general.architecture': 'clip', 'general.type': 'mmproj' }),
    );
    writeFileSync(join(outside, 'secret.gguf'), tinyGguf({ 'general.architecture': 'llama' }));
    symlinkSync(outside, join(browse, 'escape'));
    symlinkSync(join(outside, 'secret.gguf'), join(browse, 'escape.gguf'));
    symlinkSync(chat, join(shared, 'linked-chat.gguf'));
    execFileSync('mkfifo', [join(browse, 'pipe.gguf')]);
    node = await startNode({
      models: {},
      dir: join(area, 'node'),
      config: { models: { shared_dir: shared, browse_dirs: [browse] }, console: { operators: [OPERATOR] } },
    });
  });
  afterAll(async () => {
    await node?.stop();
  });

  it('without a folder lists the roots: the shared folder, the models folder and the browse folders', async () => {
    const res = await list();
    expect(res.status).toBe(200);
    const body = modelFileListSchema.parse(await res.json());
    expect(body.roots).toEqual([shared, join(area, 'node', 'models'), browse]);
    expect(body.entries.map((e) => e.path)).toEqual(body.roots);
    expect(body.dir).toBeNull();
  });

  it('lists a folder: folders first, GGUF files marked, links that leave the roots and FIFOs left out', async () => {
    const body = modelFileListSchema.parse(await (await list(browse)).json());
    expect(body.entries.map((e) => [e.name, e.kind, e.gguf])).toEqual([
      ['sub', 'dir', false],
      ['vision', 'dir', false],
      ['chat.gguf', 'file', true],
      ['nomic-embed.gguf', 'file', true],
      ['notes.txt', 'file', false],
    ]);
    expect(body.parent).toBeNull();
    const sub = modelFileListSchema.parse(await (await list(join(browse, 'sub'))).json());
    expect(sub.parent).toBe(browse);
    // A link inside a root whose target is inside a root is listed under its own name.
    const inShared = modelFileListSchema.parse(await (await list(shared)).json());
    expect(inShared.entries.map((e) => e.name)).toEqual(['linked-chat.gguf']);
  });

  it('refuses folders outside the roots, however they are named, with 403 naming the settings', async () => {
    for (const dir of [
      outside,
      join(browse, 'escape'),
      `${browse}/../outside`,
      `${browse}/sub/../../outside`,
      '/etc',
      '/',
    ]) {
      const res = await list(dir);
      expect(res.status, dir).toBe(403);
      const { error } = (await res.json()) as { error: { message: string; param: string; code: string } };
      expect(error.code).toBe('outside_model_folders');
      expect(error.param).toBe('dir');
      expect(error.message).toContain('models.browse_dirs');
    }
    // Raw request targets: an encoded `..` and a doubled query parameter are not a way out either.
    expect((await call(`/router/v1/console/model-files?dir=${browse}%2F%2E%2E%2Foutside`)).status).toBe(403);
    expect((await call(`/router/v1/console/model-files?dir=${browse}&dir=${outside}`)).status).toBe(400);
    expect((await list('relative/path')).status).toBe(400);
    expect((await list(join(browse, 'missing'))).status).toBe(404);
    // Outside the roots, a missing path is the same 403 as an existing one: nothing is learnt about the disk.
    expect((await list(join(outside, 'missing'))).status).toBe(403);
    expect((await list(chat)).status).toBe(400);
  });

  it('inspects the GGUF header: a generated llama model is text with its trained context', async () => {
    const res = await inspect(chat);
    expect(res.status).toBe(200);
    const body = modelFileInspectionSchema.parse(await res.json());
    expect(body).toMatchObject({
      path: chat,
      architecture: 'llama',
      embedding: false,
      vision_projector: null,
      capabilities: ['text'],
    });
    expect(body.context_length).toBeGreaterThan(0);
  });

  it('an embedding model is marked; a projector beside a model makes it multimodal; a projector alone is said to be one', async () => {
    const embed = modelFileInspectionSchema.parse(await (await inspect(join(browse, 'nomic-embed.gguf'))).json());
    expect(embed).toMatchObject({
      architecture: 'nomic-bert',
      context_length: 2048,
      embedding: true,
      capabilities: ['embedding'],
    });
    const vision = modelFileInspectionSchema.parse(await (await inspect(join(browse, 'vision', 'gemma.gguf'))).json());
    expect(vision).toMatchObject({
      name: 'Gemma',
      context_length: 131072,
      vision_projector: join(browse, 'vision', 'mmproj-gemma-f16.gguf'),
      capabilities: ['text', 'multimodal'],
    });
    const projector = modelFileInspectionSchema.parse(
      await (await inspect(join(browse, 'vision', 'mmproj-gemma-f16.gguf'))).json(),
    );
    expect(projector).toMatchObject({
      architecture: 'clip',
      vision_projector: join(browse, 'vision', 'mmproj-gemma-f16.gguf'),
      capabilities: [],
    });
  });

  it('refuses to inspect files outside the roots, through links, non-GGUF files and FIFOs, naming the path field', async () => {
    for (const path of [
      join(outside, 'secret.gguf'),
      join(browse, 'escape.gguf'),
      join(browse, 'escape', 'secret.gguf'),
    ]) {
      const res = await inspect(path);
      expect(res.status, path).toBe(403);
      expect(((await res.json()) as { error: { param: string } }).error.param).toBe('path');
    }
    const text = await inspect(join(browse, 'notes.txt'));
    expect(text.status).toBe(400);
    expect(await text.json()).toMatchObject({
      error: { param: 'path', message: expect.stringContaining('not a GGUF file') },
    });
    const fifo = await inspect(join(browse, 'pipe.gguf'));
    expect(fifo.status).toBe(400);
    expect(await fifo.json()).toMatchObject({
      error: { param: 'path', message: expect.stringContaining('not a file') },
    });
    expect((await inspect('chat.gguf')).status).toBe(400);
    expect((await call('/router/v1/console/model-files/inspect', OPERATOR, { path: chat, extra: 1 })).status).toBe(400);
  });

  it('is for operators only, directly and through the cluster proxy', async () => {
    expect((await list(browse, TEST_CONSOLE_TOKEN)).status).toBe(403);
    expect((await inspect(chat, TEST_CONSOLE_TOKEN)).status).toBe(403);
    expect((await list(browse, 'wrong-token-0123456789abc')).status).toBe(401);
    const proxied = await call(
      `/router/v1/console/clusters/local/console/model-files?dir=${encodeURIComponent(browse)}`,
    );
    expect(proxied.status).toBe(200);
    expect(modelFileListSchema.parse(await proxied.json()).dir).toBe(browse);
    expect(
      (
        await call(
          `/router/v1/console/clusters/local/console/model-files?dir=${encodeURIComponent(browse)}`,
          TEST_CONSOLE_TOKEN,
        )
      ).status,
    ).toBe(403);
  });
});
