import { describe, expect, it } from 'vitest';
import { inBand } from '../../src-router/http/streaming';
import { RawEvent } from '../../src-router/serve/event-batch';

// A stream whose head went out (queue comments) gets a non-streamed answer in-band. A JSON answer that came with its
// engine's bytes (`text`, issue #14) goes as those bytes, its body never parsed; an error is thrown in-band.
const all = async (items: AsyncIterable<unknown>) => {
  const out: unknown[] = [];
  for await (const item of items) out.push(item);
  return out;
};

describe('inBand', () => {
  it("yields a JSON answer's bytes as they came, without reading its body", async () => {
    const answer = {
      status: 200,
      text: '{"id": "c", "score": NaN}',
      get body(): unknown {
        throw new Error('the body was read');
      },
    };
    const [item] = await all(inBand(answer));
    expect(item).toBeInstanceOf(RawEvent);
    expect((item as RawEvent).text).toBe('{"id": "c", "score": NaN}');
  });

  it('yields the body of an answer without its bytes, and throws an error answer in-band', async () => {
    expect(await all(inBand({ status: 200, body: { id: 'c' } }))).toEqual([{ id: 'c' }]);
    await expect(
      all(inBand({ status: 503, body: { error: { message: 'busy', code: 'engine_busy' } } })),
    ).rejects.toMatchObject({ status: 503, code: 'engine_busy', message: 'busy' });
  });
});
