import { describe, expect, it } from 'vitest';
import { corpus, judge } from '../../src-router/bench/faults-corpus';
import {
  classify,
  countRuns,
  type EngineSeen,
  errorOf,
  errorSummary,
  faultRow,
  markerOf,
  markerText,
  meetsTarget,
  type Outcome,
  type RawAnswer,
  streamSummary,
  tally,
  vmRssMb,
} from '../../src-router/bench/faults-count';
import { SeenRing } from '../../src-router/engines/sim/seen';

// The fault suite's bookkeeping (issue #9): how an answer is classified, how a scenario is tallied, and which
// requests count as run twice from the sim engines' seen rings.

const answer = (over: Partial<RawAnswer>): RawAnswer => ({
  status: 200,
  body: '{}',
  ended: true,
  timedOut: false,
  stream: false,
  ...over,
});
const sse = (...events: unknown[]) =>
  events.map((e) => `data: ${typeof e === 'string' ? e : JSON.stringify(e)}\n\n`).join('');
const chunk = { choices: [{ delta: { content: 'x' } }] };

describe('classify: what a client got', () => {
  it('a 2xx read to its end is ok; a stream only with [DONE]', () => {
    expect(classify(answer({ body: '{"choices":[]}' }))).toEqual({ kind: 'ok' });
    expect(classify(answer({ stream: true, body: sse(chunk, chunk, '[DONE]') }))).toEqual({ kind: 'ok' });
  });

  it('an error status with a JSON message is a clear error, OpenAI- or Ollama-shaped, with its code', () => {
    expect(
      classify(answer({ status: 429, body: JSON.stringify({ error: { message: 'too many', code: 'queue_full' } }) })),
    ).toMatchObject({ kind: 'clear_error', code: 'queue_full', status: 429 });
    expect(classify(answer({ status: 400, body: JSON.stringify({ error: 'model is required' }) }))).toMatchObject({
      kind: 'clear_error',
      code: 'http_400',
    });
    // no code: the type, else the status
    expect(
      classify(answer({ status: 500, body: JSON.stringify({ error: { message: 'boom', type: 'server_error' } }) })),
    ).toMatchObject({ code: 'server_error' });
  });

  it('an error status without a readable message is unclear', () => {
    expect(classify(answer({ status: 502, body: 'Bad Gateway' }))).toEqual({ kind: 'unclear_error', status: 502 });
    expect(classify(answer({ status: 500, body: JSON.stringify({ error: { message: '' } }) }))).toEqual({
      kind: 'unclear_error',
      status: 500,
    });
    expect(classify(answer({ status: 200, body: 'not json' }))).toEqual({ kind: 'unclear_error', status: 200 });
  });

  it('a stream with an error event is a clear error, even without [DONE]', () => {
    const body = sse(chunk, { error: { message: 'stream broke off: node gone', code: 'node_unreachable' } });
    expect(classify(answer({ stream: true, body, ended: true }))).toMatchObject({
      kind: 'clear_error',
      code: 'node_unreachable',
      status: 200,
    });
  });

  it('a stream that closes early without an error event is cut; one that hangs past the time-out is lost', () => {
    expect(classify(answer({ stream: true, body: sse(chunk), ended: false }))).toEqual({ kind: 'cut' });
    expect(classify(answer({ stream: true, body: sse(chunk), ended: true }))).toEqual({ kind: 'cut' });
    expect(classify(answer({ stream: true, body: sse(chunk), ended: false, timedOut: true }))).toEqual({
      kind: 'lost',
      why: 'timeout',
    });
  });

  it('no status at all is lost: a reset, or a hang', () => {
    expect(classify(answer({ status: null, body: '', ended: false }))).toEqual({ kind: 'lost', why: 'reset' });
    expect(classify(answer({ status: null, body: '', ended: false, timedOut: true }))).toEqual({
      kind: 'lost',
      why: 'timeout',
    });
    // a body that broke off after its status: cut, not lost
    expect(classify(answer({ body: '{"choi', ended: false }))).toEqual({ kind: 'cut' });
    expect(classify(answer({ body: '{"choi', ended: false, timedOut: true }))).toEqual({
      kind: 'lost',
      why: 'timeout',
    });
  });

  it('errorOf and streamSummary read the shapes the router sends', () => {
    expect(errorOf({ error: { message: 'm', code: 7 } }, 400)).toEqual({ code: '7', message: 'm' });
    expect(errorOf({ nothing: true }, 400)).toBeNull();
    expect(errorOf('text', 400)).toBeNull();
    expect(streamSummary(`: comment\n\n${sse(chunk, '[DONE]')}`)).toEqual({ done: true, error: null, events: 2 });
    // a chunk that merely mentions an error field inside choices is not an error event
    expect(streamSummary(sse({ ...chunk, error: { message: 'x' } })).error).toBeNull();
  });
});

describe('tally of a scenario', () => {
  it('counts every kind, errors by code, unclear ones by status, lost by why', () => {
    const outcomes: Outcome[] = [
      { kind: 'ok' },
      { kind: 'ok' },
      { kind: 'clear_error', code: 'queue_full', status: 429, message: '' },
      { kind: 'clear_error', code: 'queue_full', status: 429, message: '' },
      { kind: 'clear_error', code: 'engine_hung', status: 502, message: '' },
      { kind: 'unclear_error', status: 502 },
      { kind: 'cut' },
      { kind: 'lost', why: 'reset' },
      { kind: 'lost', why: 'timeout' },
    ];
    const t = tally(outcomes);
    expect(t).toEqual({
      sent: 9,
      ok: 2,
      clear_error: 3,
      errors: { queue_full: 2, engine_hung: 1 },
      unclear_error: 1,
      unclear: { 502: 1 },
      cut: 1,
      lost: 2,
      lost_reset: 1,
      lost_timeout: 1,
    });
    expect(t.ok + t.clear_error + t.unclear_error + t.cut + t.lost).toBe(t.sent);
    expect(errorSummary(t.errors)).toBe('queue_full ×2, engine_hung ×1');
    expect(errorSummary({ a: 1, b: 1, c: 1, d: 1 }, 2)).toBe('a ×1, b ×1, +2 more');
    expect(errorSummary({})).toBe('');
  });

  it('a row carries the keys of the issue and meets the target only with 0 lost, 0 run twice, no failures, healthy', () => {
    const runs = countRuns([]);
    const row = faultRow(
      'queue-flood',
      [{ kind: 'ok' }, { kind: 'clear_error', code: 'queue_full', status: 429, message: 'm' }],
      runs,
      { before: 100, after: 120 },
      { note: 'n' },
    );
    for (const key of [
      'scenario',
      'sent',
      'ok',
      'clear_error',
      'errors',
      'lost',
      'run_twice',
      'rss_before_mb',
      'rss_after_mb',
    ])
      expect(row).toHaveProperty(key);
    expect(row).toMatchObject({
      benchmark: 'faults',
      scenario: 'queue-flood',
      sent: 2,
      ok: 1,
      clear_error: 1,
      errors: { queue_full: 1 },
      lost: 0,
      run_twice: 0,
      rss_before_mb: 100,
      rss_after_mb: 120,
      note: 'n',
      meets: true,
    });
    expect(faultRow('x', [{ kind: 'lost', why: 'reset' }], runs, { before: 0, after: 0 }).meets).toBe(false);
    expect(meetsTarget({ lost: 0, run_twice: 1 })).toBe(false);
    expect(meetsTarget({ lost: 0, run_twice: 0, failures: 2 })).toBe(false);
    expect(meetsTarget({ lost: 0, run_twice: 0, healthy_after: false })).toBe(false);
  });
});

describe('requests seen at engines', () => {
  const at = (id: string) => `user: ${markerText(id)} hello there`;
  const engine = (
    name: string,
    entries: [string, EngineSeen['entries'][number]['state'], boolean][],
    cutByFault = false,
  ): EngineSeen => ({
    engine: name,
    cutByFault,
    entries: entries.map(([id, state, started]) => ({ head: at(id), state, started })),
  });

  it('markers are found in a prompt head', () => {
    expect(markerOf(at('q1xab12cd'))).toBe('q1xab12cd');
    expect(markerOf('user: hello')).toBeNull();
  });

  it('a request that ran at two live engines is run twice; one only queued at the second is only seen twice', () => {
    const r = countRuns([
      engine('owner', [
        ['a', 'completed', true],
        ['b', 'completed', true],
        ['c', 'completed', true],
      ]),
      engine('helper', [
        ['a', 'completed', true],
        ['b', 'cancelled', false],
        ['c', 'cancelled', true],
      ]),
    ]);
    expect(r).toMatchObject({ run_twice: 2, seen_twice: 3, answered_twice: 1, reached: 3 });
    expect(r.examples[0]).toContain('owner (completed)');
  });

  it('a run at an engine the fault killed is not a second run (its answer died with it), but it is seen twice', () => {
    const r = countRuns([
      engine('owner', [
        ['a', 'completed', true],
        ['b', 'completed', true],
      ]),
      engine(
        'helper',
        [
          ['a', 'running', true],
          ['b', 'completed', true],
        ],
        true,
      ),
    ]);
    // a: cut short at the killed helper, then served by the owner; b: the helper had just finished it when it was killed
    expect(r).toMatchObject({ run_twice: 0, seen_twice: 2, answered_twice: 1 });
  });

  it('twice at one engine counts too; markers of other scenarios are ignored', () => {
    const r = countRuns(
      [
        engine('e', [
          ['a', 'completed', true],
          ['a', 'completed', true],
          ['z', 'completed', true],
          ['z', 'completed', true],
        ]),
      ],
      new Set(['a']),
    );
    expect(r).toMatchObject({ run_twice: 1, seen_twice: 1, answered_twice: 1, reached: 1 });
  });

  it('the sim ring keeps the last N arrivals, oldest first, with heads cut to size', () => {
    const ring = new SeenRing(3, 10);
    for (let i = 1; i <= 5; i++) ring.add(`prompt number ${i}`, i);
    expect(ring.total).toBe(5);
    expect(ring.list().map((e) => e.n)).toEqual([3, 4, 5]);
    expect(ring.list()[0]).toEqual({
      n: 3,
      at: 3,
      head: 'prompt num',
      state: 'queued',
      started: false,
      startedAt: null,
      endedAt: null,
    });
  });

  it('VmRSS in MB from /proc/<pid>/status', () => {
    expect(vmRssMb('Name:\tnode\nVmRSS:\t  102400 kB\nVmSwap:\t0 kB\n')).toBe(100);
    expect(vmRssMb('Name:\tzombie\n')).toBeNull();
  });
});

describe('the bad-input corpus', () => {
  const inputs = corpus({ nodeId: 'owner', publicUrl: 'http://127.0.0.1:2/' }, 'http://127.0.0.1:2/', {
    master: '127.0.0.1:1',
    slave: '127.0.0.1:2',
  });

  it('has at least 40 distinct inputs covering every kind the issue lists', () => {
    expect(inputs.length).toBeGreaterThanOrEqual(40);
    expect(new Set(inputs.map((i) => i.name)).size).toBe(inputs.length);
    for (const kind of [
      'json-',
      'chat-',
      'over-limit',
      'token',
      'register-unlisted',
      'inventory-',
      'query-repeated',
      'multi-',
      'lease-ttl',
      'host-',
      'origin-',
    ]) {
      expect(
        inputs.some((i) => i.name.includes(kind)),
        kind,
      ).toBe(true);
    }
  });

  it('issue #26 item 1: guarded paths also go as absolute-form, encoded, double-slash, dot-segment and upper-case targets', () => {
    const forms = inputs.filter((i) => i.name.startsWith('console-no-token-') && i.target);
    expect(forms.map((i) => i.target)).toEqual([
      'http://127.0.0.1:1/router/v1/console/models',
      '/router/v1/console/%6dodels',
      '//router/v1/console/models',
      '/x/../router/v1/console/models',
      '/ROUTER/V1/CONSOLE/MODELS',
    ]);
    expect(inputs.find((i) => i.name === 'recipe-at-a-slave-absolute-target')).toMatchObject({
      node: 'slave',
      method: 'PUT',
      target: 'http://127.0.0.1:2/router/v1/site/recipes/r',
    });
  });

  it("issue #26 item 4: forged pushes to a slave — a foreign epoch (4xx), the master's node ID with a far-future epoch and a lease the master does not hold (ignored)", () => {
    const byName = (n: string) => inputs.find((i) => i.name === n)!;
    for (const [name, path] of [
      ['guardians-push-foreign-epoch', '/router/v1/node/guardians'],
      ['links-push-foreign-epoch', '/router/v1/node/links'],
    ]) {
      expect(byName(name)).toMatchObject({ node: 'slave', method: 'POST', path });
      expect(byName(name).ignored).toBeUndefined();
      expect(JSON.parse(String(byName(name).body)).epoch).toBe('intruder:1');
    }
    for (const [name, path] of [
      ['guardians-push-forged-master-epoch', '/router/v1/node/guardians'],
      ['links-push-forged-master-epoch', '/router/v1/node/links'],
      ['lease-push-not-held', '/router/v1/node/offload/lease'],
    ]) {
      expect(byName(name)).toMatchObject({ node: 'slave', method: 'POST', path, ignored: true });
    }
    expect(JSON.parse(String(byName('guardians-push-forged-master-epoch').body))).toMatchObject({
      epoch: 'master:9999999999999',
      settings: [{ scope: 'cluster', guardian_url: 'http://127.0.0.1:1' }],
    });
  });

  it('a forged push is judged clear only when answered 2xx and marked stale or ignored', () => {
    expect(judge('f', 200, JSON.stringify({ applied: 3, stale: true }), true)).toEqual({
      name: 'f',
      status: 200,
      code: 'ignored',
      clear: true,
    });
    expect(judge('g', 200, JSON.stringify({ applied: true, ignored: true }), true)).toMatchObject({ clear: true });
    expect(judge('h', 200, JSON.stringify({ applied: 3, stale: false }), true)).toMatchObject({
      clear: false,
      code: null,
    });
    expect(judge('i', 403, JSON.stringify({ error: { message: 'no', code: 'not_my_master' } }), true)).toMatchObject({
      clear: false,
    });
  });

  it('only a 4xx with a JSON error message is clear', () => {
    expect(judge('a', 400, JSON.stringify({ error: { message: 'bad', code: 'invalid_request' } }))).toEqual({
      name: 'a',
      status: 400,
      code: 'invalid_request',
      clear: true,
    });
    expect(judge('b', 400, 'bad')).toMatchObject({ clear: false, code: null });
    expect(judge('c', 500, JSON.stringify({ error: { message: 'boom', code: 'internal' } }))).toMatchObject({
      clear: false,
      code: 'internal',
    });
    expect(judge('d', 200, '{}')).toMatchObject({ clear: false });
    expect(judge('e', null, '')).toMatchObject({ clear: false, status: null });
  });
});
