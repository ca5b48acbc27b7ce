import { describe, expect, it } from 'vitest';
import type { Target } from '../../src-router/registry';
import { seededRandom } from '../../src-router/seeded-random';
import { RawEvent, relayed } from '../../src-router/serve/event-batch';
import { parseData } from '../../src-router/serve/id-rewrite';
import { PlainDeltas, plainDelta } from '../../src-router/serve/plain-delta';
import { rewrite } from '../../src-router/serve/relay-events';
import { referenceText } from '../support/llama-server-reference';

// Issue #14: a plain content delta is relayed without parsing; it must come out exactly as the parsing relay makes it.
const reference = () =>
  referenceText('chat-stream.txt')
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => l.slice(6));

const target = (clusterId: string, names: string[]): Target => ({
  kind: 'local',
  clusterId,
  nodeId: 'n',
  localId: names[0],
  backend: 'sim',
  names,
});
const TARGETS = [
  target('tiny', ['tiny-a']),
  target('tiny', ['tiny']),
  target('pub/x', ['x', 'helper-x']),
  target('a"b', ['tiny-chat.gguf']),
  target('chat', ['tiny-chat.gguf']),
];

/** What the parsing relay does with one payload: the text it writes, the event translators see, whether it counts a token. */
function parsed(data: string, t: Target) {
  const value = parseData(data);
  const rewritten = rewrite(value, t);
  const out = relayed(data, value, rewritten);
  const e = value as { choices?: { delta?: { content?: string }; text?: string }[] };
  return {
    written: out instanceof RawEvent ? out.text : JSON.stringify(out),
    value: rewritten,
    token: !!e.choices?.some((c) => c.delta?.content || c.text),
  };
}

function expectSame(data: string, t: Target) {
  const plain = plainDelta(data, t);
  if (!plain) return false;
  const slow = parsed(data, t);
  expect(JSON.parse(plain.text), data).toEqual(JSON.parse(slow.written));
  expect(plain.value).toEqual(slow.value);
  expect(slow.token, data).toBe(true);
  const top = JSON.parse(data) as Record<string, unknown>;
  expect('usage' in top || 'timings' in top || 'error' in top).toBe(false);
  return true;
}

describe('plain content deltas relayed unparsed (issue #14)', () => {
  it("relays llama-server's content chunks unparsed, exactly as the parsing relay would, for every kind of target", () => {
    const data = reference();
    for (const t of TARGETS) {
      const fast = data.filter((d) => expectSame(d, t));
      expect(fast.length).toBeGreaterThan(0);
      // The role chunk (content null) and the error are parsed.
      expect(fast.some((d) => d.includes('"role"') || d.includes('"error"'))).toBe(false);
    }
  });

  it('rewrites the model in place: an exact local or helper ID, or a path ending in it', () => {
    const chunk = (model: string) =>
      `{"id":"c","object":"chat.completion.chunk","model":${JSON.stringify(model)},"choices":[{"index":0,"delta":{"content":"hi"}}]}`;
    expect(JSON.parse(plainDelta(chunk('x'), TARGETS[2])!.text).model).toBe('pub/x');
    expect(JSON.parse(plainDelta(chunk('helper-x'), TARGETS[2])!.text).model).toBe('pub/x');
    expect(JSON.parse(plainDelta(chunk('/models/x'), TARGETS[2])!.text).model).toBe('pub/x');
    expect(JSON.parse(plainDelta(chunk('other'), TARGETS[2])!.text).model).toBe('other');
    expect(JSON.parse(plainDelta(chunk('tiny-chat.gguf'), TARGETS[3])!.text).model).toBe('a"b');
    // Escaped names are read decoded: renamed, or left as they came.
    expect(expectSame(chunk('ti"ny\\'), TARGETS[0])).toBe(true);
    expect(JSON.parse(plainDelta(chunk('/m\\/x'), target('c', ['x']))!.text).model).toBe('c');
    expect(JSON.parse(plainDelta(chunk('x\\'), target('c', ['x']))!.text).model).toBe('x\\');
    expect(JSON.parse(plainDelta(chunk('m/"x'), target('c', ['"x']))!.text).model).toBe('c');
  });

  it('leaves to the parser what it cannot read as text: spaced JSON, a nested or second model key, bookkeeping keys', () => {
    const t = TARGETS[0];
    for (const data of [
      '{"model": "tiny-a","choices":[{"delta":{"content":"hi"}}]}',
      '{"choices":[{"delta":{"content":"hi"}}],"meta":{"model":"tiny-a"}}',
      '{"model":"tiny-a","object":"model","choices":[{"delta":{"content":"hi"}}]}',
      '{"model":"tiny-a","choices":[{"delta":{"content":"hi"}}],"usage":{"completion_tokens":3}}',
      '{"model":"tiny-a","choices":[{"delta":{"content":"hi"}}],"timings":{"predicted_ms":3}}',
      '{"model":"tiny-a","choices":[{"delta":{"content":""}}]}',
      '{"model":"tiny-a","choices":[{"delta":{"content": "hi"}}]}',
      '{"model":"tiny-a","choices":[{"delta":{},"finish_reason":"stop"}]}',
      'not json',
      '[DONE]',
      // Not JSON after all, or not a chat or completion chunk: the parsing path says what it is.
      '{"choices":[{"delta":{"content":"x"}}],"model":"lo\\q"}',
      '{"choices":[{"delta":{"content":"x"}}]}garbage',
      '{"content":"hi","model":"tiny-a"}',
      // A key spelt with escapes (usage, model): the checks read text, the parser reads keys.
      '{"choices":[{"delta":{"content":"x"}}],"us\\u0061ge":{"completion_tokens":3}}',
      '{"choices":[{"delta":{"content":"x"}}],"mod\\u0065l":"tiny-a"}',
    ])
      expect(plainDelta(data, t), data).toBeNull();
    // An event relayed as its text but asked for its value by a translator: text that is not JSON is that text.
    expect(new RawEvent('{"broken"').value).toBe('{"broken"');
  });

  it('agrees with the parsing relay on 1,000 generated chunks (quotes, escapes, keys inside content, completions)', () => {
    const rnd = seededRandom(14);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)];
    const pieces = [
      'hi',
      ' "content":"x',
      '\\',
      '"',
      '{',
      '}',
      '"model":"tiny-a"',
      'é',
      '\n',
      '',
      'usage',
      '\\"text\\":\\"',
    ];
    let plain = 0;
    for (let i = 0; i < 1000; i++) {
      const content = Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => pick(pieces)).join('');
      const model = pick(['tiny-a', 'tiny', 'x', '/m/x', 'other', '', 'a"b', '/m\\x', 'x\\', 'é/x']);
      const body = pick([
        { id: `c${i}`, model, choices: [{ index: 0, delta: { content } }] },
        { model, choices: [{ index: 0, text: content }], object: 'text_completion' },
        { choices: [{ index: 0, delta: { content } }], created: i, model },
        { id: `c${i}`, choices: [{ index: 0, delta: { reasoning_content: content } }] },
        { model, choices: [{ index: 0, delta: { content }, logprobs: { content: [{ token: content }] } }] },
      ]);
      for (const t of TARGETS) if (expectSame(JSON.stringify(body), t)) plain++;
    }
    expect(plain).toBeGreaterThan(500);
  });

  it('the deltas of a stream of one shape are relayed from the first one read: the same as reading each, for every token', () => {
    const rnd = seededRandom(7);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)];
    const pieces = [
      'hi',
      ' "content":"x',
      '\\',
      '"',
      '{',
      '}',
      '"usage":1',
      '"model":"tiny-a"',
      'é',
      '\n',
      '',
      '\\"text\\":\\"',
    ];
    for (const t of TARGETS) {
      const deltas = new PlainDeltas(t);
      let fast = 0;
      const check = (data: string) => {
        const got = deltas.relay(data);
        const slow = plainDelta(data, t);
        // Read in full or not, the same event comes out where one does; where the full read leaves a delta to the
        // parser, a kept shape may still relay it (its token only looks like a key): the parser's event is the same.
        if (slow) expect(JSON.parse(got!.text), data).toEqual(JSON.parse(slow.text));
        else if (got) expect(JSON.parse(got.text), data).toEqual(JSON.parse(parsed(data, t).written));
        if (got) fast++;
      };
      for (const d of reference()) check(d);
      for (let i = 0; i < 500; i++) {
        const content = Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => pick(pieces)).join('');
        const model = i % 50 < 25 ? 'tiny-a' : 'x';
        const body =
          i % 100 < 70
            ? {
                id: 'c1',
                object: 'chat.completion.chunk',
                created: 1,
                model,
                choices: [{ index: 0, delta: { content }, finish_reason: null }],
              }
            : { id: 'c1', object: 'text_completion', model, choices: [{ index: 0, text: content }] };
        check(JSON.stringify(body));
      }
      expect(fast).toBeGreaterThan(300);
    }
  });

  it('a token that could not stand inside the kept string is read in full', () => {
    const t = TARGETS[0];
    const deltas = new PlainDeltas(t);
    const chunk = (raw: string) => `{"model":"tiny-a","choices":[{"delta":{"content":"${raw}"}}],"object":"chunk"}`;
    expect(JSON.parse(deltas.relay(chunk('a'))!.text)).toMatchObject({
      model: 'tiny',
      choices: [{ delta: { content: 'a' } }],
    });
    // Same text around it, but the "token" closes the string and adds a key: not plain (a usage key).
    expect(deltas.relay(chunk('x"}}],"usage":{"completion_tokens":9},"y":[{"z":{"w":"'))).toBeNull();
    // An escape left open at the end would swallow the closing quote: the kept shape does not serve it; the full read
    // decides, as for any chunk.
    const open = chunk('x\\\\\\');
    expect(deltas.relay(open)?.text).toBe(plainDelta(open, t)?.text);
    // And after those, the shape still serves.
    expect(JSON.parse(deltas.relay(chunk('b\\"c'))!.text)).toMatchObject({
      model: 'tiny',
      choices: [{ delta: { content: 'b"c' } }],
    });
  });
});
