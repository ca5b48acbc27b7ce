import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { parseBareProxyArgs } from '../../src-router/bench/bare-proxy';
import { CLI } from '../support/node-harness';

// Issue #14: the bench's Node reference (`routerdesk bare-proxy`), measured beside nginx and the router: a fastify
// route that parses the body and forwards it with undici, piping a stream as it arrives. It must forward for real, or
// its columns mean nothing.

let upstream: Server | undefined;
let proxy: ChildProcess | undefined;
afterAll(async () => {
  proxy?.kill('SIGKILL');
  await new Promise<void>((r) => (upstream ? upstream.close(() => r()) : r()));
});

describe('bare-proxy', () => {
  it('refuses bad arguments with the usage', () => {
    expect(() => parseBareProxyArgs([])).toThrow(/--upstream must be an http URL[\s\S]*usage: routerdesk bare-proxy/);
    expect(() => parseBareProxyArgs(['--upstream', 'http://127.0.0.1:1', '--port', '70000'])).toThrow(
      /--port must be 0..65535/,
    );
    expect(() => parseBareProxyArgs(['--upstream'])).toThrow(/bad argument: .*'--upstream/);
    expect(() => parseBareProxyArgs(['--upstream', 'http://127.0.0.1:1', '--nope', 'x'])).toThrow(
      /bad argument: .*'--nope'/,
    );
    expect(parseBareProxyArgs(['--upstream', 'http://127.0.0.1:9/x', '--port', '5'])).toMatchObject({
      host: '127.0.0.1',
      port: 5,
    });
  });

  it("forwards a chat completion body, parsed and sent again, and answers the upstream's bytes", async () => {
    const seen: unknown[] = [];
    upstream = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        const json = JSON.parse(body) as { stream?: boolean };
        seen.push({ path: req.url, body: json });
        if (!json.stream)
          return res.writeHead(200, { 'content-type': 'application/json' }).end('{"id":"x","model":"m"}');
        // A stream: its second event only once the client has the first, so a proxy that waits for the end never ends.
        res.writeHead(200, { 'content-type': 'text/event-stream' }).write('data: {"n":1}\n\n');
        void firstSeen.then(() => res.end('data: {"n":2}\n\ndata: [DONE]\n\n'));
      });
    });
    let sawFirst!: () => void;
    const firstSeen = new Promise<void>((r) => (sawFirst = r));
    await new Promise<void>((r) => upstream!.listen(0, '127.0.0.1', r));
    const up = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    proxy = spawn(process.execPath, [CLI, 'bare-proxy', '--upstream', up], { stdio: ['ignore', 'pipe', 'inherit'] });
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      proxy!.stdout!.on('data', (d) => {
        out += d;
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (m) resolve(m[1]);
      });
      proxy!.once('error', reject);
      proxy!.once('exit', (code) => reject(new Error(`bare-proxy exited (${code}) before listening: ${out}`)));
    });
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{ "model": "m", "messages": [] }',
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('{"id":"x","model":"m"}');
    expect(seen).toEqual([{ path: '/v1/chat/completions', body: { model: 'm', messages: [] } }]);

    // The bench's per-chunk floor: a stream is piped as it arrives, not read whole first.
    const streamed = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"model":"m","messages":[],"stream":true}',
    });
    expect(streamed.headers.get('content-type')).toContain('text/event-stream');
    const reader = streamed.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!text.includes('{"n":1}')) {
      const r = await reader.read();
      if (r.done) throw new Error(`the stream ended before its first event: ${text}`);
      text += decoder.decode(r.value, { stream: true });
    }
    expect(text).not.toContain('{"n":2}');
    sawFirst();
    for (let r = await reader.read(); !r.done; r = await reader.read())
      text += decoder.decode(r.value, { stream: true });
    expect(text).toBe('data: {"n":1}\n\ndata: {"n":2}\n\ndata: [DONE]\n\n');
  });
});
