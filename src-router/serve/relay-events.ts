import type { HttpAnswer } from '../backends/http-call';
import { type AnswerFacts, QUEUE_MS_HEADER, queueMsOf } from '../contract/answer-facts';
import type { Target } from '../registry';
import type { RequestOutcome } from '../store';
import { RouterError } from './errors';
import { EventBatch, relayed } from './event-batch';
import { parseData, rewriteResponseModel, SseDataSplitter } from './id-rewrite';
import { PlainDeltas } from './plain-delta';
import type { Upstream } from './upstream';
import { engineReportedMs, usagePromptTokens, type WorkMeasure } from './work-measure';

/** Ends a request once: its outcome, status, error and the work measured. */
export type Finish = (
  outcome: RequestOutcome,
  status: number | null,
  error: string | null,
  extra?: WorkMeasure,
) => void;

/** An answer's model names (the target's local and helper IDs) rewritten to the ID the client used. */
export const rewrite = (value: unknown, target: Target) =>
  target.names.reduce((v, name) => rewriteResponseModel(v, name, target.clusterId), value);

/**
 * Relays SSE events with IDs rewritten, in the batches they arrived in; records the request when the stream ends, fails or is cancelled.
 * A slave's stream that ends with its queue time as a trailer is read to its end, for that trailer (`facts`).
 */
export async function* relayEvents(
  res: HttpAnswer,
  body: AsyncIterable<Uint8Array | string>,
  upstream: Upstream,
  target: Target,
  finish: Finish,
  facts: AnswerFacts,
): AsyncGenerator<EventBatch> {
  let tokens = 0;
  let usage: number | undefined;
  let promptTokens: number | undefined;
  let engineMs: number | undefined;
  let outcome: RequestOutcome = 'cancelled';
  let error: string | null = 'client closed the request';
  let status = 499;
  // The events one chunk completed, relayed as one batch (one write to the client); `[DONE]` ends the relay.
  let done = false;
  // An in-band error ends the relay after the events before it in the same read went out.
  let failed: RouterError | null = null;
  const plainDeltas = new PlainDeltas(target);
  const relayBatch = (batch: string[]): EventBatch | null => {
    const out: unknown[] = [];
    for (const data of batch) {
      // Most chunks are one token of content: relayed as they came, unparsed.
      const plain = plainDeltas.relay(data);
      if (plain) {
        tokens++;
        out.push(plain);
        continue;
      }
      const event = parseData(data);
      if (event === '[DONE]') {
        if (facts.queueMsAtEnd) continue;
        done = true;
        break;
      }
      const e = event as {
        choices?: { delta?: { content?: string }; text?: string }[];
        usage?: { completion_tokens?: number };
        error?: { message?: string; code?: string };
      };
      if (e.error && !e.choices) {
        failed = new RouterError(502, e.error.code ?? 'stream_error', e.error.message ?? 'the stream failed');
        break;
      }
      if (e.choices?.some((c) => c.delta?.content || c.text)) tokens++;
      if (typeof e.usage?.completion_tokens === 'number') usage = e.usage.completion_tokens;
      promptTokens = usagePromptTokens(e) ?? promptTokens;
      engineMs = engineReportedMs(e) ?? engineMs;
      out.push(relayed(data, event, rewrite(event, target)));
    }
    return out.length ? new EventBatch(out) : null;
  };
  try {
    // The body is split in this loop, not by a generator in between: one async step per chunk fewer.
    const split = new SseDataSplitter();
    for await (const chunk of body) {
      const out = relayBatch(split.push(chunk));
      if (out) yield out;
      if (failed) throw failed;
      if (done) {
        // The engine ends its answer right after `[DONE]`, often in a write of its own: that end is awaited off the
        // relay, not cut off, so its connection stays open for the next request.
        res.drainRest?.();
        break;
      }
    }
    if (!done) {
      const out = relayBatch(split.end());
      if (out) yield out;
      if (failed) throw failed;
    }
    if (facts.queueMsAtEnd) facts.queueMs = queueMsOf(res.trailers?.()[QUEUE_MS_HEADER]);
    outcome = 'ok';
    error = null;
    status = 200;
  } catch (err) {
    if ((err as Error).name === 'AbortError' || (err as { code?: string }).code === 'ABORT_ERR')
      throw new RouterError(499, 'client_closed', 'client closed the request');
    const e = err instanceof RouterError ? err : await upstream.explain(err);
    outcome = 'error';
    error = e.message;
    status = e.status;
    throw new RouterError(
      e.status,
      e.code,
      e.message.includes('broke off') || err instanceof RouterError ? e.message : `stream broke off: ${e.message}`,
    );
  } finally {
    // Not read to the end (the client left, stalled or the relay stopped): the engine stops too.
    if (outcome === 'cancelled') upstream.cancel();
    finish(outcome, status, error, { tokensGenerated: usage ?? tokens, promptTokens, engineMs });
  }
}
