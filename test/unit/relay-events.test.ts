import { describe, expect, it } from 'vitest';
import type { HttpAnswer } from '../../src-router/backends/http-call';
import type { AnswerFacts } from '../../src-router/contract/answer-facts';
import type { Target } from '../../src-router/registry';
import { EventBatch, RawEvent } from '../../src-router/serve/event-batch';
import { relayEvents } from '../../src-router/serve/relay-events';
import type { Upstream } from '../../src-router/serve/upstream';
import { referenceText } from '../support/llama-server-reference';

// Issue #14: the relay takes what one read brought as one batch. llama-server's captured stream ends with deltas and
// then an in-band error: the deltas before the error still reach the client, then the stream fails (502).
const target: Target = {
  kind: 'local',
  clusterId: 'chat',
  nodeId: 'n',
  localId: 'tiny-chat.gguf',
  backend: 'sim',
  names: ['tiny-chat.gguf'],
};

describe('relayed SSE (ID-3)', () => {
  it('an error in the same read as the deltas before it: the deltas go out, then the stream fails', async () => {
    const text = referenceText('chat-stream.txt');
    const body = (async function* () {
      yield new TextEncoder().encode(text); // the whole capture in one read
    })();
    const ends: unknown[] = [];
    const upstream = { cancel() {}, explain: async (e: unknown) => e } as unknown as Upstream;
    const facts = {} as AnswerFacts;
    const out: string[] = [];
    const relay = (async () => {
      for await (const batch of relayEvents({} as HttpAnswer, body, upstream, target, (...a) => ends.push(a), facts)) {
        for (const e of (batch as EventBatch).events) out.push(e instanceof RawEvent ? e.text : JSON.stringify(e));
      }
    })();
    await expect(relay).rejects.toMatchObject({ status: 502 });
    const deltas = text.split('\n').filter((l) => l.startsWith('data: ') && !l.includes('"error"')).length;
    expect(deltas).toBeGreaterThan(1);
    expect(out).toHaveLength(deltas);
    expect(out.every((e) => JSON.parse(e).model === 'chat')).toBe(true);
    const contentDeltas = text.split('\n').filter((l) => l.startsWith('data: ') && l.includes('"content":"')).length;
    expect(ends).toEqual([
      ['error', 502, expect.any(String), expect.objectContaining({ tokensGenerated: contentDeltas })],
    ]);
  });
});
