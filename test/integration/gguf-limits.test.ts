import { execFileSync, spawn } from 'node:child_process';
import {
  closeSync,
  constants,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  realpathSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GGUF_READS_AT_ONCE } from '../../src-router/engines/gguf-headers';
import { GGUF_LIMITS } from '../../src-router/engines/llama-node/gguf-reader';
import { writeTinyLlamaGguf } from '../../src-router/engines/llama-node/gguf-writer';
import { bigHeaderGguf, deepGguf, hugeArrayGguf, hugeStringGguf } from '../support/crafted-gguf';
import { startNode, type TestNode, tempDir } from '../support/node-harness';

// Every GGUF header the node reads is bounded (bytes, array lengths, string lengths, keys, depth) and read a few at a
// time: crafted headers get a clear error naming the file and the limit, kept for that file version; the node's
// memory stays bounded and its other models keep answering. A model file is opened once and checked as opened: a
// FIFO, or a symlink to one swapped in after the check, is refused without blocking the node.

const OPERATOR = 'operator-token-0123456789abcdef';
const sim = { load_time: '10ms', token_time: '0ms' };

/** Resident and peak resident memory of a process, in bytes (/proc/<pid>/status). */
function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)![1]) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

describe('GGUF headers are read within limits, and model files are opened once', () => {
  let node: TestNode;
  let dir: string;
  const files: Record<string, string> = {};

  const post = (path: string, body: unknown, token?: string) =>
    fetch(`${node.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(60_000),
    });
  const inspect = (path: string) => post('/router/v1/console/model-files/inspect', { path }, OPERATOR);
  const tags = () => fetch(`${node.url}/api/tags`, { signal: AbortSignal.timeout(60_000) });

  beforeAll(async () => {
    dir = realpathSync(tempDir('routerdesk-gguf-limits-'));
    const ggufs = join(dir, 'ggufs');
    mkdirSync(ggufs);
    files.good = join(ggufs, 'good.gguf');
    await writeTinyLlamaGguf(files.good, { embd: 32, layers: 1, type: 'f16', seed: 3, ctx: 2048 });
    const crafted: Record<string, Buffer> = {
      hugeArray: hugeArrayGguf(),
      hugeString: hugeStringGguf(),
      deep: deepGguf(40),
      bigBytes: bigHeaderGguf(64, 'bytes'),
      bigStrings: bigHeaderGguf(64, 'strings'),
    };
    for (const [name, bytes] of Object.entries(crafted)) {
      files[name] = join(ggufs, `${name}.gguf`);
      writeFileSync(files[name], bytes);
    }
    files.fifo = join(ggufs, 'pipe.gguf');
    execFileSync('mkfifo', [files.fifo]);
    const model = (name: string, path: string) => ({
      name,
      backend: 'sim' as const,
      capabilities: ['text' as const],
      model: path,
      sim,
    });
    node = await startNode({
      dir: join(dir, 'node'),
      models: {
        good: model('good', files.good),
        'big-strings': model('big-strings', files.bigStrings),
        'huge-array': model('huge-array', files.hugeArray),
      },
      config: { models: { browse_dirs: [ggufs] }, console: { operators: [OPERATOR] } },
    });
  });
  afterAll(async () => {
    await node?.stop();
  });

  it('three inspections of 64 MiB headers at once, with Ollama tags and show meanwhile: bounded memory, the good model answers', async () => {
    const pid = node.proc.pid!;
    const before = memoryOf(pid);
    const answers = await Promise.all([
      ...[files.bigBytes, files.bigStrings, files.bigBytes, files.bigStrings].map(inspect),
      tags(),
      tags(),
      post('/api/show', { model: 'good' }),
      post('/api/show', { model: 'big-strings' }),
      post('/api/show', { model: 'huge-array', verbose: true }),
    ]);
    const statuses = answers.map((r) => r.status);
    expect(statuses).toEqual([400, 400, 400, 400, 200, 200, 200, 422, 422]);
    // Peak memory above what the node held before: no more than the reads running at once can hold, each within
    // its header limit (bytes read, and what the kept items cost at most per byte).
    const bound = GGUF_READS_AT_ONCE * 4 * GGUF_LIMITS.headerBytes;
    expect(memoryOf(pid).peak - before.rss).toBeLessThan(bound);

    const list = (await answers[4].json()) as { models: { name: string; details: { format: string } }[] };
    expect(list.models.map((m) => m.name).sort()).toEqual(['big-strings', 'good', 'huge-array']);
    expect(list.models.find((m) => m.name === 'good')!.details.format).toBe('gguf');
    expect(((await answers[6].json()) as { details: { family: string } }).details.family).toBe('llama');
    const bad = (await answers[7].json()) as { error: string };
    expect(bad.error).toContain("'bigStrings.gguf'");
    expect(bad.error).toContain('32 MiB of header');
    expect(bad.error).not.toContain(dir); // a client is told the file's name, not where it lies

    // The errors are kept for the file version: asked again, nothing is read again, and each was logged once.
    expect((await tags()).status).toBe(200);
    expect((await post('/api/show', { model: 'huge-array' })).status).toBe(422);
    expect((await post('/api/show', { model: 'huge-array' })).status).toBe(422);
    for (const f of [files.bigBytes, files.bigStrings, files.hugeArray])
      expect(node.output().split(`GGUF header of ${f} not read`).length - 1, f).toBe(1);
    expect((await fetch(`${node.url}/health`)).status).toBe(200);
  });

  it('inspect refuses each crafted header with the file and the limit it went past', async () => {
    const cases: [string, string][] = [
      [files.hugeArray, `past the limit of ${GGUF_LIMITS.arrayLength.toLocaleString('en-US')} items in one array`],
      [files.hugeString, 'past the limit of 1 MiB in one string'],
      [files.deep, `past the limit of arrays nested ${GGUF_LIMITS.depth} deep`],
      [files.bigBytes, 'past the limit of 32 MiB of header'],
      [files.bigStrings, 'past the limit of 32 MiB of header'],
    ];
    for (const [path, says] of cases) {
      const res = await inspect(path);
      expect(res.status, path).toBe(400);
      const { error } = (await res.json()) as { error: { code: string; message: string; param: string } };
      expect(error.code).toBe('gguf_header_too_large');
      expect(error.param).toBe('path');
      expect(error.message).toContain(path);
      expect(error.message).toContain(says);
    }
    const good = await inspect(files.good);
    expect(good.status).toBe(200);
    expect(await good.json()).toMatchObject({ architecture: 'llama', context_length: 2048 });
  });

  it('refuses a FIFO, and one swapped in after the path was checked, while the node goes on answering', async () => {
    const direct = await inspect(files.fifo);
    expect(direct.status).toBe(400);
    expect(await direct.json()).toMatchObject({
      error: { code: 'not_a_file', message: expect.stringContaining('a FIFO') },
    });

    // `swap.gguf` turns, as fast as a process can, from the good GGUF (a hard link) into a symlink to the FIFO and back.
    const swap = join(dir, 'ggufs', 'swap.gguf');
    linkSync(files.good, swap);
    const swapper = spawn(
      process.execPath,
      [
        '-e',
        `const fs = require('fs');
         const [swap, good, fifo] = process.argv.slice(1);
         const end = Date.now() + 60000;
         for (let i = 0; Date.now() < end; i++) {
           const tmp = swap + '.' + (i % 2);
           try { fs.rmSync(tmp, { force: true }); } catch {}
           if (i % 2) fs.symlinkSync(fifo, tmp); else fs.linkSync(good, tmp);
           fs.renameSync(tmp, swap);
         }`,
        swap,
        files.good,
        files.fifo,
      ],
      { stdio: 'ignore' },
    );
    try {
      const seen = new Map<number, number>();
      // Rounds of four inspections at once (as many as libuv has threads), the console and a client API beside them.
      for (let round = 0; round < 40; round++) {
        const [a, b, c, d, health, models, ollama] = await Promise.all([
          inspect(swap),
          inspect(swap),
          inspect(swap),
          inspect(swap),
          fetch(`${node.url}/health`, { signal: AbortSignal.timeout(30_000) }),
          fetch(`${node.url}/router/v1/console/model-files?dir=${encodeURIComponent(join(dir, 'ggufs'))}`, {
            headers: { authorization: `Bearer ${OPERATOR}` },
            signal: AbortSignal.timeout(30_000),
          }),
          tags(),
        ]);
        for (const r of [a, b, c, d]) seen.set(r.status, (seen.get(r.status) ?? 0) + 1);
        expect([health.status, models.status, ollama.status]).toEqual([200, 200, 200]);
      }
      // Each answer is the good file read (200), the FIFO refused as found (400), or the swap seen at the open (409).
      expect([...seen.keys()].filter((s) => ![200, 400, 409].includes(s))).toEqual([]);
      expect(seen.get(200)).toBeGreaterThan(0);
    } finally {
      swapper.kill('SIGKILL');
      // Whatever might still wait on the FIFO gets a writer (and so its end): nothing of this test stays blocked.
      try {
        closeSync(openSync(files.fifo, constants.O_WRONLY | constants.O_NONBLOCK));
      } catch {
        /* no reader waits: nothing to release */
      }
    }
  });
});
