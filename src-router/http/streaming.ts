import { once } from 'node:events';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { errorPayload, toRouterError } from './errors';

/**
 * Writes a stream of objects to the client as they come, one write per object (no buffering of a stream):
 * SSE (`data: …\n\n`, `data: [DONE]`) for OpenAI, NDJSON for Ollama. An error after the first byte is sent in-band.
 */
export async function writeStream(request: FastifyRequest, reply: FastifyReply, items: AsyncIterable<unknown>, format: 'sse' | 'ndjson', onEnd: () => void): Promise<void> {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    'content-type': format === 'sse' ? 'text/event-stream; charset=utf-8' : 'application/x-ndjson',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  res.flushHeaders();
  try {
    for await (const item of items) {
      if (res.destroyed) break;
      // A slow reader slows the relay instead of the router buffering the whole stream.
      if (!res.write(format === 'sse' ? `data: ${JSON.stringify(item)}\n\n` : `${JSON.stringify(item)}\n`)) await Promise.race([once(res, 'drain'), once(res, 'close')]);
    }
    if (format === 'sse' && !res.destroyed) res.write('data: [DONE]\n\n');
  } catch (err) {
    const e = toRouterError(err);
    if (e.status !== 499) {
      request.log.warn({ code: e.code, url: request.url }, e.message);
      if (!res.destroyed) res.write(format === 'sse' ? `data: ${JSON.stringify(errorPayload('/v1/', e))}\n\n` : `${JSON.stringify(errorPayload('/api/', e))}\n`);
    }
  } finally {
    onEnd();
    res.end();
  }
}
