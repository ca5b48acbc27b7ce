import type { ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RouterError } from '../contract';
import { EventBatch, RawEvent } from '../serve/event-batch';
import { errorPayload, toRouterError } from './errors';
import { redactUrl } from './redact';
import { watchWriteOut } from './write-out';

/**
 * Writes a stream of objects to the client as they come, one write per object or per batch of events that arrived
 * together (`EventBatch`; no buffering of a stream):
 * SSE (`data: …\n\n`, `data: [DONE]`) for OpenAI, NDJSON for Ollama, typed SSE (`event: <type>\ndata: …\n\n`, no
 * `[DONE]`) for the Responses API. An error after the first byte is sent in-band. `trailers`, asked for once the
 * items ended, go out after the last byte (the queue time of a stream whose head went out first).
 */
export async function writeStream(
  request: FastifyRequest,
  reply: FastifyReply,
  items: AsyncIterable<unknown>,
  format: StreamFormat,
  onEnd: () => void,
  writeTimeoutMs: number,
  trailers: () => Record<string, string> = () => ({}),
): Promise<void> {
  const res = reply.raw;
  const it = items[Symbol.asyncIterator]();
  let next: Promise<IteratorResult<unknown>> | undefined;
  let done = false;
  try {
    // A stream that waited in a router queue has sent its head already, with its queue comments (`queue-notice`).
    if (!res.headersSent) {
      openStream(reply, format, {}, false);
      // The head goes out with the first events when they are there at once (the engine's head and first events came
      // in one read): one write to the client instead of two. Else now: the client sees the stream begin.
      next = it.next();
      if (!(await readyNow(next))) res.flushHeaders();
    }
    for (;;) {
      const r = await (next ?? it.next());
      next = undefined;
      if (r.done) {
        done = true;
        break;
      }
      if (res.destroyed) break;
      // A slow reader slows the relay instead of the router buffering the whole stream; one that takes nothing for
      // server.write_timeout is cut off, so it cannot hold its engine (and every request behind it) forever.
      if (!res.write(frame(format, r.value)) && !(await drained(res, writeTimeoutMs))) {
        if (!res.destroyed)
          request.log.warn(
            { code: 'client_stalled', url: redactUrl(request.url) },
            `client took nothing of the stream for ${Math.round(writeTimeoutMs / 1000)} s: cut off`,
          );
        // The request ends now, before the relay unwinds (its unwinding waits on the engine's stream): its engine call
        // is aborted and the lane released. onEnd is idempotent; the finally below calls it again.
        onEnd();
        res.destroy();
        break;
      }
    }
    if (format === 'sse' && !res.destroyed) res.write('data: [DONE]\n\n');
  } catch (err) {
    const e = toRouterError(err);
    if (e.status !== 499) {
      request.log.warn({ code: e.code, url: redactUrl(request.url) }, e.message);
      if (!res.destroyed)
        res.write(
          format === 'ndjson'
            ? frame(format, errorPayload('/api/', e))
            : `data: ${JSON.stringify(errorPayload('/v1/', e))}\n\n`,
        );
    }
  } finally {
    // Left before the items ended (the client went or stalled): they stop, as a for-await's break stops them.
    if (!done)
      await it
        .return?.(undefined)
        .catch((err: unknown) =>
          request.log.warn(
            { code: 'stream_cleanup', url: redactUrl(request.url) },
            `stream cleanup failed: ${(err as Error).message}`,
          ),
        );
    onEnd();
    const t = trailers();
    if (Object.keys(t).length && !res.destroyed) res.addTrailers(t);
    // The stream's last bytes are bounded like any answer's: a client that takes none of them is cut off.
    watchWriteOut(res, writeTimeoutMs, () =>
      request.log.warn(
        { code: 'client_stalled', url: redactUrl(request.url) },
        `client took nothing of the stream's end for ${Math.round(writeTimeoutMs / 1000)} s: cut off`,
      ),
    );
    res.end();
  }
}

/** Whether a promise settles within this turn of the event loop (before any new I/O is looked at). */
function readyNow(p: Promise<unknown>): Promise<boolean> {
  return new Promise((resolve) => {
    const later = setImmediate(() => resolve(false));
    const now = () => {
      clearImmediate(later);
      resolve(true);
    };
    p.then(now, now);
  });
}

export type StreamFormat = 'sse' | 'sse-events' | 'ndjson';

/**
 * Takes the response over from fastify and sets a stream's head (headers set on the raw response before are kept);
 * `flush`: sent now, else with the first write.
 */
export function openStream(
  reply: FastifyReply,
  format: StreamFormat,
  headers: Record<string, string> = {},
  flush = true,
): void {
  reply.hijack();
  reply.raw.writeHead(200, {
    'content-type': format !== 'ndjson' ? 'text/event-stream; charset=utf-8' : 'application/x-ndjson',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    ...headers,
  });
  if (flush) reply.raw.flushHeaders();
}

/**
 * The items of an answer that is not a stream, for a stream whose head already went out: an error is sent in-band. A
 * JSON answer with its engine's bytes (`text`) goes as those bytes, parsed only for a format that translates it.
 */
export async function* inBand(
  answer: { status: number; body: unknown; text?: string } | { error: unknown },
): AsyncGenerator<unknown> {
  if ('error' in answer) throw answer.error;
  if (answer.status < 400) {
    yield answer.text !== undefined ? new RawEvent(answer.text) : answer.body;
    return;
  }
  const e = (answer.body as { error?: { message?: unknown; code?: unknown } } | null)?.error;
  throw new RouterError(
    answer.status,
    typeof e?.code === 'string' ? e.code : 'engine_error',
    typeof e?.message === 'string' ? e.message : `the answer was ${answer.status}`,
  );
}

function frame(format: StreamFormat, item: unknown): string {
  if (item instanceof EventBatch) {
    let text = '';
    for (const e of item.events) text += frame(format, e);
    return text;
  }
  if (item instanceof RawEvent && format === 'sse') return `data: ${item.text}\n\n`;
  if (item instanceof RawEvent) return frame(format, item.value);
  if (format === 'ndjson') return `${JSON.stringify(item)}\n`;
  const type = format === 'sse-events' ? (item as { type?: unknown }).type : undefined;
  return `${typeof type === 'string' ? `event: ${type}\n` : ''}data: ${JSON.stringify(item)}\n\n`;
}

/** Waits until the client took the buffered data: true; false when it closed or took nothing for `ms`. */
function drained(res: ServerResponse, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      res.off('drain', onDrain);
      res.off('close', onClose);
      resolve(ok);
    };
    const onDrain = () => done(true);
    const onClose = () => done(false);
    const timer = setTimeout(() => done(false), ms);
    res.once('drain', onDrain);
    res.once('close', onClose);
  });
}
