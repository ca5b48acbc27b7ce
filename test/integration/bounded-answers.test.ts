import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startNode, type TestNode, tempDir } from '../support/node-harness';
import { nodeWithStaticUpstream } from '../support/static-upstream';

/**
 * A misbehaving engine (a real process the node supervises, as llama-server): its `/health` answers, and a chat
 * request's first message says how it misbehaves — `endless-line`: an SSE stream whose one `data:` line never ends;
 * `huge-error`: a 500 whose error body never ends. It writes as fast as it is read until its connection is closed,
 * then notes the mode in `closed.log`.
 */
const ENGINE = `
const http = require('node:http');
const fs = require('node:fs');
const [host, port, log] = process.argv.slice(2);
const piece = 'a'.repeat(64 * 1024);
function endless(res, first) {
  res.write(first);
  const more = () => { while (!res.destroyed && res.write(piece)) {} };
  res.on('drain', more);
  more();
}
http.createServer((req, res) => {
  if (req.url === '/health') return res.end('{"status":"ok"}');
  if (req.url !== '/v1/chat/completions') { res.statusCode = 404; return res.end('{}'); }
  let body = '';
  req.on('data', (d) => (body += d));
  req.on('end', () => {
    const mode = JSON.parse(body).messages[0].content;
    res.on('close', () => fs.appendFileSync(log, mode + '\\n'));
    if (mode === 'endless-line') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      endless(res, 'data: {"choices":[{"delta":{"content":"');
    } else {
      res.writeHead(500, { 'content-type': 'application/json' });
      endless(res, '{"error":{"message":"');
    }
  });
}).listen(Number(port), host);
`;

describe.runIf(process.platform === 'linux')("issue #26 item 10: an engine's answer is read within bounds", () => {
  const dir = tempDir();
  const script = join(dir, 'bad-engine.cjs');
  const closedLog = join(dir, 'closed.log');
  let node: TestNode;

  beforeAll(async () => {
    writeFileSync(script, ENGINE);
    node = await startNode({
      dir,
      models: {
        bad: {
          name: 'bad',
          backend: 'llama-server',
          capabilities: ['text'],
          command: `"${process.execPath}" "${script}" \${HOST} \${PORT} "${closedLog}"`,
        },
      },
    });
  }, 30_000);
  afterAll(async () => {
    await node?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const post = (path: string, mode: string, stream: boolean) =>
    fetch(`${node.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'bad', messages: [{ role: 'user', content: mode }], stream }),
    });
  /** How many times the engine saw a request of `mode` closed by the node. */
  const closedCount = (mode: string) =>
    existsSync(closedLog)
      ? readFileSync(closedLog, 'utf8')
          .split('\n')
          .filter((l) => l === mode).length
      : 0;

  it("an SSE line that never ends: the OpenAI client gets an in-band 502 error event, and the engine's answer is closed", async () => {
    const before = closedCount('endless-line');
    const res = await post('/v1/chat/completions', 'endless-line', true);
    const text = await res.text();
    const event = text.split('\n').find((l) => l.startsWith('data: {"error"'));
    expect(event, text.slice(0, 500)).toBeDefined();
    const err = (JSON.parse(event!.slice(6)) as { error: { code: string; message: string; type: string } }).error;
    expect(err.code).toBe('answer_too_large');
    expect(err.type).toBe('server_error');
    expect(err.message).toContain("engine for model 'bad' sent an SSE line over 16 MiB");
    // Nothing of the endless line reached the client.
    expect(text.length).toBeLessThan(10_000);
    await eventually(() => closedCount('endless-line') > before, { what: 'the engine seeing its answer closed' });
  });

  it('an SSE line that never ends: the Ollama client gets an NDJSON error line', async () => {
    const res = await post('/api/chat', 'endless-line', true);
    const text = await res.text();
    const line = text.trim().split('\n').pop()!;
    const err = JSON.parse(line) as { error: string };
    expect(err.error).toContain("engine for model 'bad' sent an SSE line over 16 MiB");
    expect(text.length).toBeLessThan(10_000);
  });

  it('an error body that never ends: 502 answer_too_large, OpenAI-shaped on /v1, and its connection is closed', async () => {
    const before = closedCount('huge-error');
    const res = await post('/v1/chat/completions', 'huge-error', false);
    expect(res.status).toBe(502);
    const body = (await res.json()) as { error: { code: string; message: string; type: string } };
    expect(body.error.code).toBe('answer_too_large');
    expect(body.error.type).toBe('server_error');
    expect(body.error.message).toContain("engine for model 'bad' answered 500 and sent an answer over 64 KiB");
    await eventually(() => closedCount('huge-error') > before, { what: 'the engine seeing its answer closed' });
  });

  it('an error body that never ends: 502, Ollama-shaped on /api', async () => {
    const res = await post('/api/chat', 'huge-error', false);
    expect(res.status).toBe(502);
    const body = (await res.json()) as { error: string };
    expect(typeof body.error).toBe('string');
    expect(body.error).toContain('over 64 KiB');
  });

  it('the node is still serving and logged each cut-off answer', async () => {
    const health = await fetch(`${node.url}/health`);
    expect(health.status).toBe(200);
    await eventually(() => (node.output().match(/answer_too_large/g) ?? []).length >= 4, {
      what: 'four warnings naming answer_too_large',
    });
  });
});

describe("issue #26 item 10: a static-route endpoint's stream is read within bounds", () => {
  it('an SSE line that never ends: an in-band 502 naming the upstream, and its connection closed', async () => {
    let closedAt: Promise<void> | undefined;
    const piece = 'b'.repeat(64 * 1024);
    const up = await nodeWithStaticUpstream((req, res) => {
      req.resume();
      req.on('end', () => {
        closedAt = new Promise((resolve) => res.on('close', () => resolve()));
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: {"choices":[{"delta":{"content":"');
        const more = () => {
          while (!res.destroyed && res.write(piece)) {
            /* until the socket is full */
          }
        };
        res.on('drain', more);
        more();
      });
    });
    try {
      const res = await fetch(`${up.node.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'up', messages: [{ role: 'user', content: 'hi' }], stream: true }),
      });
      const text = await res.text();
      const event = text.split('\n').find((l) => l.startsWith('data: {"error"'));
      expect(event, text.slice(0, 500)).toBeDefined();
      const err = (JSON.parse(event!.slice(6)) as { error: { code: string; message: string } }).error;
      expect(err.code).toBe('answer_too_large');
      expect(err.message).toMatch(/upstream http:\/\/127\.0\.0\.1:\d+ for 'up' sent an SSE line over 16 MiB/);
      await closedAt;
    } finally {
      await up.close();
    }
  });
});
