import { describe, expect, it } from 'vitest';
import { rewriteResponseModel, sseEvents } from '../../src-router/serve';
import { RawEvent, relayed } from '../../src-router/serve/event-batch';
import { depthAt, modelKey, rawWithModel, SseDataSplitter, sseDataBatches } from '../../src-router/serve/id-rewrite';

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
    expect(rewriteResponseModel({ id: 'x', model: 'tiny-a', choices: [] }, 'tiny-a', 'tiny')).toEqual({
      id: 'x',
      model: 'tiny',
      choices: [],
    });
    expect(rewriteResponseModel({ model: 'koboldcpp/tiny-a' }, 'tiny-a', 'tiny')).toEqual({ model: 'tiny' });
    expect(rewriteResponseModel({ model: 'other' }, 'tiny-a', 'tiny')).toEqual({ model: 'other' });
    expect(rewriteResponseModel('text', 'a', 'b')).toBe('text');
  });

  it('splits SSE events across arbitrary chunk boundaries, in order', async () => {
    const events = await collect([
      'data: {"model":"a","n":1}\n',
      '\ndata: {"mo',
      'del":"a","n":2}\r\n\r\n: comment\n',
      'data: [DONE]\n\n',
    ]);
    expect(events).toEqual([{ model: 'a', n: 1 }, { model: 'a', n: 2 }, '[DONE]']);
  });

  it('keeps a last event without a trailing newline and passes non-JSON data as text', async () => {
    expect(await collect(['data: hello\n', 'data: {"x":1}'])).toEqual(['hello', { x: 1 }]);
  });

  it('batches the events each chunk completes, so they are relayed in one write (issue #14)', async () => {
    async function* gen() {
      for (const c of [
        'data: {"n":1}\n\ndata: {"n":2}\n\ndata: {"n',
        '":3}\r\n\r\n',
        ': comment\n\n',
        'data: [DONE]\n\n',
      ])
        yield new TextEncoder().encode(c);
    }
    const batches: string[][] = [];
    for await (const b of sseDataBatches(gen())) batches.push(b);
    expect(batches).toEqual([['{"n":1}', '{"n":2}'], ['{"n":3}'], ['[DONE]']]);
  });

  it('splits synchronously, chunk by chunk: a character split across chunks stays whole; the last line without a newline comes at the end', () => {
    const split = new SseDataSplitter();
    const bytes = new TextEncoder().encode('data: {"t":"é"}\ndata: {"t":"ok"}');
    const cut = bytes.indexOf(0xc3) + 1; // inside the two bytes of é
    expect(split.push(bytes.slice(0, cut))).toEqual([]);
    expect(split.push(bytes.slice(cut))).toEqual(['{"t":"é"}']);
    expect(split.end()).toEqual(['{"t":"ok"}']);
    expect(split.end()).toEqual([]);
  });

  it('relays an event as the text it arrived in, its one top-level model key rewritten in place (issue #14)', () => {
    const text = '{"choices":[{"delta":{"content":"hi"}}],"model":"tiny-a","object":"chat.completion.chunk"}';
    const value = JSON.parse(text);
    const same = relayed(text, value, value);
    expect(same).toBeInstanceOf(RawEvent);
    expect((same as RawEvent).text).toBe(text);
    const rewritten = rewriteResponseModel(value, 'tiny-a', 'tiny');
    const out = relayed(text, value, rewritten) as RawEvent;
    expect(out).toBeInstanceOf(RawEvent);
    expect(JSON.parse(out.text)).toEqual(rewritten);
    expect(out.value).toBe(rewritten);
  });

  it('falls back to the rewritten object where the text cannot be rewritten in place', () => {
    // Spaced JSON, a second "model" (a nested key or a value), a name that needs escaping: serialised again.
    for (const text of [
      '{"model": "tiny-a","n":1}',
      '{"model":"tiny-a","tool":{"model":"tiny-a"}}',
      '{"model":"tiny-a","object":"model"}',
    ]) {
      const value = JSON.parse(text);
      const rewritten = rewriteResponseModel(value, 'tiny-a', 'tiny');
      expect(relayed(text, value, rewritten)).toBe(rewritten);
    }
    const value = { model: 'a"b' };
    const rewritten = rewriteResponseModel(value, 'a"b', 'pub');
    const out = relayed(JSON.stringify(value), value, rewritten) as RawEvent;
    expect(JSON.parse(out.text)).toEqual({ model: 'pub' });
  });

  it('finds the one compact model key of a JSON text, its name decoded (issue #14)', () => {
    expect(modelKey('{"a":1,"model":"m-1","b":2}')).toMatchObject({ at: 7, name: 'm-1' });
    expect(modelKey('{"model":"a\\"b\\\\"}')?.name).toBe('a"b\\');
    expect(modelKey('{"model":"x","object":"model"}')).toBeNull();
    expect(modelKey('{"model": "x"}')).toBeNull();
    expect(modelKey('{"m":"x"}')).toBeNull();
    // An escaped quote before it: the end of another key (`x\"model`), not a model key.
    expect(modelKey('{"x\\"model":"v","y":1}')).toBeNull();
    expect(depthAt('{"a":{"b":[1,"]}"],"c":1},"model"', 26)).toBe(1);
  });

  it('passes a request body on as the client sent it, its top-level model renamed in place; else it is serialised again (issue #14)', () => {
    const raw = '{ "messages":[{"role":"user","content":"caf\\u00e9 \\"model\\""}],"model":"pub","temperature":1.50 }';
    const json = JSON.parse(raw) as { model: string };
    expect(rawWithModel(raw, json, 'pub')).toBe(raw);
    const renamed = rawWithModel(raw, json, 'loc"al')!;
    expect(renamed).toBe(raw.replace('"model":"pub"', '"model":"loc\\"al"'));
    expect(JSON.parse(renamed)).toEqual({ ...json, model: 'loc"al' });
    // A nested or second model key, a spaced one, or a name that is not the parsed one: serialised again.
    // (Each body parses to a top-level model "pub": a lone nested literal key means the top-level one is spelt with escapes.)
    for (const other of [
      '{"tools":[{"model":"pub"}],"model":"pub"}',
      '{"x":{"model":"pub"},"mod\\u0065l":"pub"}',
      '{"model" : "pub"}',
    ]) {
      expect((JSON.parse(other) as { model: string }).model).toBe('pub');
      expect(rawWithModel(other, { model: 'pub' }, 'loc')).toBeUndefined();
    }
    expect(rawWithModel('{"model":"pub"}', { model: 'other' }, 'loc')).toBeUndefined();
  });
});
