import { describe, expect, it } from 'vitest';
import { scanAnswer, unparsedAnswer } from '../../src-router/serve/answer-scan';
import { rewriteResponseModel } from '../../src-router/serve/id-rewrite';

// Issue #14: a non-streamed answer passes on unparsed, its top-level model renamed in place and its usage and timings
// read alone. Whatever it does must equal parsing the whole answer and renaming its model (ID-3), or give up.

const slice = (text: string, s: { from: number; to: number } | undefined) => (s ? text.slice(s.from, s.to) : undefined);

describe('scanAnswer', () => {
  it('finds the top-level model, usage and timings of a chat answer, compact or spaced', () => {
    const answer = {
      id: 'c',
      object: 'chat.completion',
      model: 'local',
      choices: [{ message: { content: 'hi' } }],
      usage: { prompt_tokens: 5, completion_tokens: 2 },
      timings: { prompt_ms: 1.5, predicted_ms: 3 },
    };
    for (const text of [JSON.stringify(answer), JSON.stringify(answer, null, 2), ` ${JSON.stringify(answer)}\n`]) {
      const s = scanAnswer(text)!;
      expect(slice(text, s.model)).toBe('local');
      expect(JSON.parse(slice(text, s.usage)!)).toEqual(answer.usage);
      expect(JSON.parse(slice(text, s.timings)!)).toEqual(answer.timings);
    }
  });

  it("finds an embedding answer's model after its data, and ignores nested or quoted ones", () => {
    const text = JSON.stringify({
      object: 'list',
      data: [{ object: 'embedding', model: 'nested', embedding: [0.1, -2e-7, 3] }],
      note: '"model":"in a string" {[',
      model: 'top',
      usage: { prompt_tokens: 3 },
    });
    const s = scanAnswer(text)!;
    expect(slice(text, s.model)).toBe('top');
    expect(JSON.parse(slice(text, s.usage)!)).toEqual({ prompt_tokens: 3 });
    expect(s.timings).toBeUndefined();
  });

  it('gives up where only a parse reads it exactly', () => {
    expect(scanAnswer('[{"model":"m"}]')).toBeNull(); // not an object
    expect(scanAnswer('"model"')).toBeNull();
    expect(scanAnswer('{"model":"m"')).toBeNull(); // unbalanced
    expect(scanAnswer('{"model":"m"}}')).toBeNull();
    expect(scanAnswer('{"model":"m"} x')).toBeNull(); // something after it
    expect(scanAnswer('{"model":"m}')).toBeNull(); // a string never closed
    expect(scanAnswer('{"mod\\u0065l":"m"}')).toBeNull(); // a key spelt with escapes may be any name
    expect(scanAnswer('{"model":"a","model":"b"}')).toBeNull(); // a parse takes the last
    expect(scanAnswer('{"usage":{"a":1},"usage":{"a":2}}')).toBeNull();
  });

  it('leaves values of another type unread, as a parse finds nothing in them', () => {
    const s = scanAnswer('{"model":null,"usage":[1,2],"timings":"x"}')!;
    expect(s).toEqual({});
  });
});

describe('unparsedAnswer', () => {
  it('renames the model in place where it names the local ID, and reads usage only when asked', () => {
    const text = '{"id":"x","model":"local","usage":{"completion_tokens":2}}';
    expect(unparsedAnswer(text, ['local'], 'public', true)).toEqual({
      text: '{"id":"x","model":"public","usage":{"completion_tokens":2}}',
      measured: { usage: { completion_tokens: 2 }, timings: undefined },
    });
    expect(unparsedAnswer(text, ['local'], 'public', false)).toEqual({
      text: '{"id":"x","model":"public","usage":{"completion_tokens":2}}',
      measured: {},
    });
    expect(unparsedAnswer(text, ['other'], 'public', false)!.text).toBe(text);
    // A path that ends in the local ID names it too.
    expect(unparsedAnswer('{"model":"/models/local"}', ['local'], 'pub"lic', false)!.text).toBe(
      '{"model":"pub\\"lic"}',
    );
    // An escaped name is read as its parse reads it.
    expect(unparsedAnswer('{"model":"lo\\u0063al"}', ['local'], 'public', false)!.text).toBe('{"model":"public"}');
  });

  it('gives up on a usage that is not JSON, so the whole parse says what is wrong', () => {
    expect(unparsedAnswer('{"model":"m","usage":{"a":01}}', ['m'], 'p', true)).toBeUndefined();
    expect(unparsedAnswer('{"model":"m","usage":{"a":01}}', ['m'], 'p', false)).toBeDefined();
  });

  it('equals a whole parse and rename on generated answers (seeded)', () => {
    let seed = 14;
    const rand = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)];
    const strings = [
      'local',
      'public',
      '/m/local',
      'model',
      '"model":"local"',
      'a\\b',
      '{[',
      '}]',
      'é ✓ 𝄞',
      '\n\t',
      '',
    ];
    const value = (depth: number): unknown => {
      const r = rand();
      if (depth > 2 || r < 0.3) return pick([1, -0.5, 2e-7, true, null, ...strings]);
      if (r < 0.6) return Array.from({ length: Math.floor(rand() * 4) }, () => value(depth + 1));
      return object(depth + 1);
    };
    const object = (depth: number): Record<string, unknown> => {
      const o: Record<string, unknown> = {};
      for (let i = Math.floor(rand() * 5); i > 0; i--)
        o[pick(['model', 'usage', 'timings', 'data', 'x', 'a"b', 'choices'])] = value(depth);
      return o;
    };
    let scanned = 0;
    for (let i = 0; i < 3_000; i++) {
      const answer = object(0);
      if (rand() < 0.5) answer.model = pick(strings);
      if (rand() < 0.5) answer.usage = { prompt_tokens: i, completion_tokens: 2 };
      const text = JSON.stringify(answer, null, rand() < 0.3 ? 1 : undefined);
      const parsed = JSON.parse(text) as Record<string, unknown>;
      const out = unparsedAnswer(text, ['local'], 'public', true);
      // JSON.stringify writes no duplicates: only a top-level key with an escape in it (`a\"b`) makes the scan give up.
      const escapedKey = Object.keys(parsed).some((k) => JSON.stringify(k) !== `"${k}"`);
      expect(out === undefined).toBe(escapedKey);
      if (!out) continue;
      scanned++;
      expect(JSON.parse(out.text)).toEqual(rewriteResponseModel(parsed, 'local', 'public'));
      const isObject = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v);
      expect(out.measured.usage).toEqual(isObject(parsed.usage) ? parsed.usage : undefined);
      expect(out.measured.timings).toEqual(isObject(parsed.timings) ? parsed.timings : undefined);
    }
    expect(scanned).toBeGreaterThan(2_000);
  });
});
