import { AnswerTooLarge, SSE_EVENT_LIMIT, START_CHARS } from '../backends/answer-limits';
import { positionOfComment } from '../contract/answer-facts';

/**
 * A forwarded stream that waits in the slave's router queue. The slave (asked with
 * `QUEUE_COMMENTS_HEADER`) sends its head at once and then SSE comments `: queued, position N` until the request
 * runs. The master reads those leading comments here — its SSE parser (`sseEvents`) drops comment lines, so they
 * would never reach its client — and hands the position on (`onPosition`): the master's own `http/queue-notice`
 * writes the client's comments. Resolves once the first line that is not a comment arrives (the request runs), with
 * the body from that line on.
 */
export async function readQueueComments(
  body: AsyncIterable<Uint8Array | string>,
  onPosition: (position: () => number | null) => void,
): Promise<AsyncIterable<Uint8Array | string>> {
  const it = body[Symbol.asyncIterator]();
  const decoder = new TextDecoder();
  let position: number | null = null;
  let told = false;
  // The line still open (no newline yet): only new text is scanned, and it is bounded as any SSE line.
  let open = '';
  try {
    for (;;) {
      const next = await it.next();
      if (next.done) return rest(open, it, decoder, true);
      const text = typeof next.value === 'string' ? next.value : decoder.decode(next.value, { stream: true });
      let from = 0;
      let nl: number;
      while ((nl = text.indexOf('\n', from)) >= 0) {
        const line = (open + text.slice(from, nl)).replace(/\r$/, '');
        if (line !== '' && !line.startsWith(':')) return rest(open + text.slice(from), it, decoder, false);
        open = '';
        from = nl + 1;
        const at = positionOfComment(line);
        if (at === null) continue;
        position = at;
        if (!told) {
          told = true;
          onPosition(() => position);
        }
      }
      if (open.length + text.length - from > SSE_EVENT_LIMIT) {
        // Not read further: the body is closed (its connection with it).
        await it.return?.();
        throw new AnswerTooLarge(SSE_EVENT_LIMIT, (open || text.slice(from)).slice(0, START_CHARS), 'an SSE line');
      }
      open += text.slice(from);
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
function rest(
  head: string,
  it: AsyncIterator<Uint8Array | string>,
  decoder: InstanceType<typeof TextDecoder>,
  done: boolean,
): AsyncIterable<string> {
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
