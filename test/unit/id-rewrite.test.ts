import { describe, expect, it } from 'vitest';
import { rewriteResponseModel, sseEvents } from '../../src-router/serve';
import { sseBatches } from '../../src-router/serve/id-rewrite';

async function collect(chunks: string[]) {
  async function* gen() {
    for (const c of chunks) yield new TextEncoder().encode(c);
  }
  const out: unknown[] = [];
  for await (const e of sseEvents(gen())) out.push(e);
  return out;
}

describe('ID rewriting (ID-3)', () => {
  it('rewrites the local ID in a response to the public one', () => {
    expect(rewriteResponseModel({ id: 'x', model: 'tiny-a', choices: [] }, 'tiny-a', 'tiny')).toEqual({ id: 'x', model: 'tiny', choices: [] });
    expect(rewriteResponseModel({ model: 'koboldcpp/tiny-a' }, 'tiny-a', 'tiny')).toEqual({ model: 'tiny' });
    expect(rewriteResponseModel({ model: 'other' }, 'tiny-a', 'tiny')).toEqual({ model: 'other' });
    expect(rewriteResponseModel('text', 'a', 'b')).toBe('text');
  });

  it('splits SSE events across arbitrary chunk boundaries, in order', async () => {
    const events = await collect(['data: {"model":"a","n":1}\n', '\ndata: {"mo', 'del":"a","n":2}\r\n\r\n: comment\n', 'data: [DONE]\n\n']);
    expect(events).toEqual([{ model: 'a', n: 1 }, { model: 'a', n: 2 }, '[DONE]']);
  });

  it('keeps a last event without a trailing newline and passes non-JSON data as text', async () => {
    expect(await collect(['data: hello\n', 'data: {"x":1}'])).toEqual(['hello', { x: 1 }]);
  });

  it('batches the events each chunk completes, so they are relayed in one write (issue #14)', async () => {
    async function* gen() {
      for (const c of ['data: {"n":1}\n\ndata: {"n":2}\n\ndata: {"n', '":3}\r\n\r\n', ': comment\n\n', 'data: [DONE]\n\n']) yield new TextEncoder().encode(c);
    }
    const batches: unknown[][] = [];
    for await (const b of sseBatches(gen())) batches.push(b);
    expect(batches).toEqual([[{ n: 1 }, { n: 2 }], [{ n: 3 }], ['[DONE]']]);
  });
});
