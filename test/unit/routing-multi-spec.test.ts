import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MULTI_SPEC,
  MULTI_MESSAGES,
  parseMultiSpec,
  STRATEGIES,
  STRATEGY_MESSAGES,
  validateStrategy,
} from '../../src-router/routing';

const WEIGHTABLE = ['least-request', 'least-kv-cache', 'prefix-affinity'];

describe('multi: spec validation (ROUTE-3, the seed table row by row)', () => {
  it('empty spec → enter at least one name:weight pair', () => {
    for (const s of ['', 'multi:', 'multi:   ', 'multi'])
      expect(parseMultiSpec(s)).toEqual({ ok: false, message: 'Enter at least one name:weight pair.' });
    expect(MULTI_MESSAGES.empty).toBe('Enter at least one name:weight pair.');
  });

  it('an empty entry (double comma, trailing or leading comma) → remove it, single commas', () => {
    const message = 'Remove the empty entry and separate pairs with single commas.';
    for (const s of [
      'multi:least-request:3,,least-kv-cache:1',
      'multi:least-request:3,',
      'multi:,least-request:3',
      'multi:least-request:3, ,least-kv-cache:1',
    ]) {
      expect(parseMultiSpec(s)).toEqual({ ok: false, message });
    }
  });

  it('no colon, a missing name or a missing weight → not a name:weight pair, with an example', () => {
    expect(parseMultiSpec('multi:least-request')).toEqual({
      ok: false,
      message: '"least-request" is not a name:weight pair (for example least-request:3).',
    });
    expect(parseMultiSpec('multi::3')).toEqual({
      ok: false,
      message: '":3" is not a name:weight pair (for example least-request:3).',
    });
    expect(parseMultiSpec('multi:least-request:')).toEqual({
      ok: false,
      message: '"least-request:" is not a name:weight pair (for example least-request:3).',
    });
  });

  it('a name not in multiScorers → not weightable, listing the weightable ones', () => {
    expect(parseMultiSpec('multi:random:1')).toEqual({
      ok: false,
      message: '"random" is not weightable. Weightable scorers: least-request, least-kv-cache, prefix-affinity.',
    });
    expect(parseMultiSpec('multi:least-request:3,round-robin:1').ok).toBe(false);
  });

  it('a weight that is not a finite number above zero → must be above zero', () => {
    for (const w of ['0', '-1', 'abc', 'Infinity', 'NaN', '1e999']) {
      expect(parseMultiSpec(`multi:least-request:${w}`)).toEqual({
        ok: false,
        message: 'The weight of "least-request" must be a number above zero.',
      });
    }
  });

  it('answers the first problem in entry order', () => {
    expect(parseMultiSpec('multi:bogus:1,least-request:0')).toEqual({
      ok: false,
      message: MULTI_MESSAGES.notWeightable('bogus', WEIGHTABLE),
    });
    expect(parseMultiSpec('multi:least-request:0,bogus:1')).toEqual({
      ok: false,
      message: MULTI_MESSAGES.weight('least-request'),
    });
  });

  it('splits each pair at its LAST colon', () => {
    expect(parseMultiSpec('multi:least-kv-cache:1')).toEqual({
      ok: true,
      scorers: [{ name: 'least-kv-cache', weight: 1 }],
    });
    // A name containing a colon keeps it: the weight is only what follows the last colon.
    expect(parseMultiSpec('multi:vllm:kv:2')).toEqual({
      ok: false,
      message: MULTI_MESSAGES.notWeightable('vllm:kv', WEIGHTABLE),
    });
    expect(parseMultiSpec('multi:least-request:3:1')).toEqual({
      ok: false,
      message: MULTI_MESSAGES.notWeightable('least-request:3', WEIGHTABLE),
    });
  });

  it('parses the seeded default spec, spaces around names and weights allowed', () => {
    expect(DEFAULT_MULTI_SPEC).toBe('multi:least-request:3,least-kv-cache:1');
    expect(parseMultiSpec(DEFAULT_MULTI_SPEC)).toEqual({
      ok: true,
      scorers: [
        { name: 'least-request', weight: 3 },
        { name: 'least-kv-cache', weight: 1 },
      ],
    });
    expect(parseMultiSpec(' multi: least-request : 0.5 , prefix-affinity:2 ')).toEqual({
      ok: true,
      scorers: [
        { name: 'least-request', weight: 0.5 },
        { name: 'prefix-affinity', weight: 2 },
      ],
    });
  });
});

describe('validateStrategy (the whole setRouting strategy)', () => {
  it('accepts every single strategy and multi specs', () => {
    for (const name of ['random', 'round-robin', 'least-request', 'least-kv-cache', 'prefix-affinity']) {
      const v = validateStrategy(name, STRATEGIES);
      expect(v.ok && v.strategy.name).toBe(name);
    }
    const m = validateStrategy(DEFAULT_MULTI_SPEC, STRATEGIES);
    expect(m).toEqual({
      ok: true,
      strategy: {
        spec: DEFAULT_MULTI_SPEC,
        name: 'multi',
        scorers: [
          { name: 'least-request', weight: 3 },
          { name: 'least-kv-cache', weight: 1 },
        ],
      },
    });
    expect(validateStrategy('least-request', STRATEGIES)).toEqual({
      ok: true,
      strategy: { spec: 'least-request', name: 'least-request', scorers: [{ name: 'least-request', weight: 1 }] },
    });
  });

  it('names an unknown strategy and lists the known ones', () => {
    expect(validateStrategy('fastest', STRATEGIES)).toEqual({
      ok: false,
      message:
        'Unknown routing strategy "fastest". Known strategies: random, round-robin, least-request, least-kv-cache, prefix-affinity, multi:name:weight,….',
    });
    expect(validateStrategy('  ', STRATEGIES)).toEqual({ ok: false, message: STRATEGY_MESSAGES.empty });
  });

  it('passes the multi table messages through', () => {
    expect(validateStrategy('multi:', STRATEGIES)).toEqual({ ok: false, message: MULTI_MESSAGES.empty });
    expect(validateStrategy('multi:random:1', STRATEGIES)).toEqual({
      ok: false,
      message: MULTI_MESSAGES.notWeightable('random', WEIGHTABLE),
    });
  });
});
