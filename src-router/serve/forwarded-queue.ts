import { positionOfComment } from '../contract/answer-facts';

/**
 * Issue #15: a forwarded stream that waits in the slave's router queue. The slave (asked with
 * `QUEUE_COMMENTS_HEADER`) sends its head at once and then SSE comments `: queued, position N` until the request
 * runs. The master reads those leading comments here — its SSE parser (`sseEvents`) drops comment lines, so they
 * would never reach its client — and hands the position on (`onPosition`): the master's own `http/queue-notice`
 * writes the client's comments. Resolves once the first line that is not a comment arrives (the request runs), with
 * the body from that line on.
 */
export async function readQueueComments(
  body: AsyncIterable<Uint8Array | string>, onPosition: (position: () => number | null) => void,
): Promise<AsyncIterable<Uint8Array | string>> {
  const it = body[Symbol.asyncIterator]();
  const decoder = new TextDecoder();
  let position: number | null = null;
  let told = false;
  let buffer = '';
  try {
    for (;;) {
      const next = await it.next();
      if (next.done) return rest(buffer, it, decoder, true);
      buffer += typeof next.value === 'string' ? next.value : decoder.decode(next.value, { stream: true });
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl).replace(/\r$/, '');
        if (line !== '' && !line.startsWith(':')) return rest(buffer, it, decoder, false);
        buffer = buffer.slice(nl + 1);
        const at = positionOfComment(line);
        if (at === null) continue;
        position = at;
        if (!told) {
          told = true;
          onPosition(() => position);
        }
      }
    }
  } finally {
    // It runs (or the stream ended or broke): no longer waiting.
    position = null;
  }
}

/**
 * The body from the first line that was not a comment on: what was read of it, then the rest, decoded by the same
 * decoder (a character split across chunks stays whole). Not read to the end, the body is closed.
 */
function rest(head: string, it: AsyncIterator<Uint8Array | string>, decoder: InstanceType<typeof TextDecoder>, done: boolean): AsyncIterable<string> {
  return {
    [Symbol.asyncIterator]: async function* () {
      let ended = done;
      try {
        if (head) yield head;
        while (!ended) {
          const next = await it.next();
          if (next.done) ended = true;
          else yield typeof next.value === 'string' ? next.value : decoder.decode(next.value, { stream: true });
        }
        const tail = decoder.decode();
        if (tail) yield tail;
      } finally {
        if (!ended) await it.return?.();
      }
    },
  };
}
