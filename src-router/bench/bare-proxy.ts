/**
 * The bench's Node reference: what Node itself reaches on this machine as a proxy. A bare fastify route
 * that parses the JSON body and forwards it with an undici `Pool`, answering the upstream's bytes (a stream piped as it
 * arrives) — the yardstick ("leaves room for routing, metrics and ID rewriting, not for waste").
 * proxy-overhead measures it beside nginx and the router in the same run (wrk's table; a long stream's CPU per chunk),
 * so the router's cost over what Node costs anyway is a ratio too.
 * `routerdesk bare-proxy --upstream URL [--host H] [--port N]` (`cli/bare-proxy-command.ts`).
 */

import { parseArgs } from 'node:util';
import Fastify from 'fastify';
import { Pool } from 'undici';

export const BARE_PROXY_USAGE = 'usage: routerdesk bare-proxy --upstream URL [--host 127.0.0.1] [--port 0]';

export function parseBareProxyArgs(argv: string[]): { upstream: URL; host: string; port: number } {
  let values: { upstream?: string; host?: string; port?: string };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { upstream: { type: 'string' }, host: { type: 'string' }, port: { type: 'string' } },
      strict: true,
    }));
  } catch (err) {
    throw new Error(`bare-proxy: bad argument: ${(err as Error).message}\n${BARE_PROXY_USAGE}`);
  }
  if (!values.upstream || !URL.canParse(values.upstream))
    throw new Error(`bare-proxy: --upstream must be an http URL\n${BARE_PROXY_USAGE}`);
  const port = Number(values.port ?? 0);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new Error(`bare-proxy: --port must be 0..65535\n${BARE_PROXY_USAGE}`);
  return { upstream: new URL(values.upstream), host: values.host ?? '127.0.0.1', port };
}

/** Starts the proxy; `close` stops it and its connections to the upstream. */
export async function startBareProxy({ upstream, host, port }: ReturnType<typeof parseBareProxyArgs>) {
  const pool = new Pool(upstream.origin, { connections: 128 });
  const app = Fastify();
  app.post('/v1/chat/completions', async (request, reply) => {
    const res = await pool.request({
      path: '/v1/chat/completions',
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(request.body),
    });
    const type = String(res.headers['content-type'] ?? 'application/json');
    // A stream is piped as it arrives (each read of the upstream one write to the client): what a Node relay costs per
    // chunk here, beside the router's per-chunk CPU in the bench's long-stream table.
    if (type.includes('text/event-stream')) return reply.status(res.statusCode).type(type).send(res.body);
    const body = await res.body.text();
    return reply.status(res.statusCode).type(type).send(body);
  });
  const url = await app.listen({ host, port });
  return { url, current: { app }, close: () => app.close().then(() => pool.close()) };
}
