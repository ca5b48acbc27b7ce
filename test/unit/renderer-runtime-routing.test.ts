import { describe, expect, it } from 'vitest';
import { MULTI_MESSAGES, parseMultiSpec } from '../../src-renderer/src/runtime/multi-spec';
import {
  canApply,
  canReset,
  draftReducer,
  initialDraft,
  planApply,
  profileControl,
  type RoutingDraft,
} from '../../src-renderer/src/runtime/routing-draft';
import {
  appliedStrategy,
  notReportingExplanation,
  profileInForce,
  profileNotes,
  requiredMetrics,
  requiresHint,
  stateRows,
  strategyButtonFor,
  syncPill,
  writeAccess,
} from '../../src-renderer/src/runtime/routing-view';
import { formatLastAnswer, upstreamRows } from '../../src-renderer/src/runtime/upstreams-view';
import type { RoutingViewWire, UpstreamRowWire } from '../../src-router/contract';
import { routingViewFixture } from '../support/renderer-fixtures';

// The Routing card's pure parts (ROUTE-1..9).

const SCORERS = ['least-request', 'least-kv-cache', 'prefix-affinity'];

/** The full strategy list a real live module answers with. */
function view(over: Partial<RoutingViewWire> = {}): RoutingViewWire {
  const effective =
    over.effective === undefined
      ? { strategy: 'round-robin', routes_engine: null, source: 'config_default' as const }
      : over.effective;
  return routingViewFixture({
    strategies: [
      { name: 'random', label: 'random', requires: [], weightable: false },
      { name: 'round-robin', label: 'round-robin', requires: [], weightable: false },
      {
        name: 'least-request',
        label: 'least request',
        requires: ['num_requests_running', 'num_requests_waiting'],
        weightable: true,
      },
      {
        name: 'least-kv-cache',
        label: 'least KV cache',
        requires: ['kv_cache_usage', 'kv_cache_usage_cpu'],
        weightable: true,
      },
      { name: 'prefix-affinity', label: 'prefix affinity', requires: [], weightable: true },
      {
        name: 'multi',
        label: 'multi (weighted)',
        requires: ['num_requests_running', 'num_requests_waiting', 'kv_cache_usage', 'kv_cache_usage_cpu'],
        weightable: false,
      },
    ],
    multiScorers: SCORERS,
    engineReporting: effective !== null,
    ...over,
    effective,
  });
}

describe('multi spec parsing before publish (ROUTE-3)', () => {
  it('accepts name:weight pairs split at the last colon; the published spec is prefixed', () => {
    expect(parseMultiSpec('multi:least-request:3,least-kv-cache:1', SCORERS)).toEqual({
      ok: true,
      pairs: [
        { name: 'least-request', weight: 3 },
        { name: 'least-kv-cache', weight: 1 },
      ],
      spec: 'multi:least-request:3,least-kv-cache:1',
    });
    expect(parseMultiSpec(' least-request : 0.5 ', SCORERS)).toMatchObject({
      ok: true,
      pairs: [{ name: 'least-request', weight: 0.5 }],
      spec: 'multi:least-request : 0.5',
    });
  });

  it('answers the first problem with the seed table messages, in order', () => {
    const msg = (s: string) => {
      const r = parseMultiSpec(s, SCORERS);
      return r.ok ? null : r.message;
    };
    expect(msg('')).toBe('Enter at least one name:weight pair.');
    expect(msg('multi:')).toBe(MULTI_MESSAGES.empty);
    expect(msg('multi')).toBe(MULTI_MESSAGES.empty);
    expect(msg('multi:least-request:3,,least-kv-cache:1')).toBe(
      'Remove the empty entry and separate pairs with single commas.',
    );
    expect(msg('multi:least-request:3,')).toBe(MULTI_MESSAGES.emptyEntry);
    expect(msg('multi:least-request')).toBe('"least-request" is not a name:weight pair (for example least-request:3).');
    expect(msg('multi::3')).toBe('":3" is not a name:weight pair (for example least-request:3).');
    expect(msg('multi:least-request:')).toBe(
      '"least-request:" is not a name:weight pair (for example least-request:3).',
    );
    expect(msg('multi:random:1')).toBe(
      '"random" is not weightable. Weightable scorers: least-request, least-kv-cache, prefix-affinity.',
    );
    // Split at the LAST colon: the name is everything before it.
    expect(msg('multi:least:request:1')).toBe(MULTI_MESSAGES.notWeightable('least:request', SCORERS));
    expect(msg('multi:least-request:0')).toBe('The weight of "least-request" must be a number above zero.');
    expect(msg('multi:least-request:-1')).toBe(MULTI_MESSAGES.weight('least-request'));
    expect(msg('multi:least-request:abc')).toBe(MULTI_MESSAGES.weight('least-request'));
    expect(msg('multi:least-request:Infinity')).toBe(MULTI_MESSAGES.weight('least-request'));
    // The first problem wins.
    expect(msg('multi:random:0,,')).toBe(MULTI_MESSAGES.notWeightable('random', SCORERS));
  });
});

describe('desired vs effective (ROUTE-6)', () => {
  it('pills: engine in sync / pending pickup / engine not reporting; no green without a beacon', () => {
    expect(syncPill({ engineReporting: true, inSync: true })).toEqual({
      state: 'in-sync',
      label: 'engine in sync',
      tone: 'ok',
    });
    expect(syncPill({ engineReporting: true, inSync: false })).toEqual({
      state: 'pending',
      label: 'pending pickup',
      tone: 'busy',
    });
    expect(syncPill({ engineReporting: false, inSync: true })).toEqual({
      state: 'not-reporting',
      label: 'engine not reporting',
      tone: 'bad',
    });
    expect(syncPill({ engineReporting: false, inSync: false }).tone).not.toBe('ok');
  });

  it('rows: in force, requested (`— (module default)` when nothing published), profile, source', () => {
    expect(stateRows(view()).map((r) => [r.label, r.value])).toEqual([
      ['In force (engine)', 'round-robin'],
      ['Requested', '— (module default)'],
      ['Metric profile', 'not reported'],
      ['Source', 'config default'],
    ]);
    const v = view({
      desired: { strategy: 'least-request', routes_engine: 'clutch-layers' },
      effective: null,
      engineReporting: false,
    });
    expect(stateRows(v).map((r) => r.value)).toEqual(['—', 'least-request', 'clutch-layers', '—']);
  });

  it('metric profile: effective, falling back to desired; `not reported` when none; another engine is named', () => {
    expect(
      profileInForce({
        effective: { strategy: 'x', routes_engine: 'vllm', source: 'routing_key' },
        desired: { strategy: 'x', routes_engine: 'clutch-layers' },
      }),
    ).toBe('vllm');
    expect(
      profileInForce({
        effective: { strategy: 'x', routes_engine: null, source: 'routing_key' },
        desired: { strategy: 'x', routes_engine: 'clutch-layers' },
      }),
    ).toBe('clutch-layers');
    expect(profileInForce({ effective: null, desired: null })).toBe('not reported');
  });

  it('without a beacon, the card explains the key and that a published strategy waits as desired state', () => {
    const text = notReportingExplanation('clutchcall:inference:routing');
    expect(text).toContain('clutchcall:inference:routing.effective');
    expect(text).toContain('stored as desired state');
    expect(text).toContain('adopted when a module starts polling');
  });
});

describe('requires hint (ROUTE-2)', () => {
  it('names the metrics and warns of the random-ready-pod fallback, or says none are needed', () => {
    const v = view();
    const lr = requiresHint(requiredMetrics('least-request', '', v));
    expect(lr.warn).toBe(true);
    expect(lr.text).toContain('num_requests_running, num_requests_waiting');
    expect(lr.text).toContain('falls back to a random ready pod');
    const rr = requiresHint(requiredMetrics('round-robin', '', v));
    expect(rr).toMatchObject({ warn: false, metrics: [] });
    expect(rr.text).toContain('Needs no scraped metrics');
  });

  it('multi: the union of its scorers’ requirements from the data; an unparsable spec shows the multi entry’s own list', () => {
    const v = view();
    expect(requiredMetrics('multi', 'multi:least-request:1,prefix-affinity:2', v)).toEqual([
      'num_requests_running',
      'num_requests_waiting',
    ]);
    expect(requiredMetrics('multi', 'multi:prefix-affinity:2', v)).toEqual([]);
    expect(requiredMetrics('multi', 'multi:,,', v)).toEqual(v.strategies[5].requires);
    expect(requiredMetrics('no-such', '', v)).toEqual([]);
  });
});

describe('metric profiles on the card (ROUTE-4)', () => {
  it('a profile that cannot fill a strategy’s metrics leaves that strategy cold for its pods; multi is left to the requires hint', () => {
    const v = view({
      profiles: [
        {
          name: 'llama.cpp',
          reads: ['llamacpp:requests_processing', 'llamacpp:requests_deferred'],
          provides: ['num_requests_running', 'num_requests_waiting'],
        },
        {
          name: 'vllm',
          reads: ['vllm:kv_cache_usage_perc'],
          provides: ['num_requests_running', 'num_requests_waiting', 'kv_cache_usage', 'kv_cache_usage_cpu'],
        },
        { name: 'blind', reads: [], provides: [] },
      ],
    });
    const [llama, vllm, blind] = profileNotes(v);
    expect(llama).toEqual({
      name: 'llama.cpp',
      reads: ['llamacpp:requests_processing', 'llamacpp:requests_deferred'],
      missing: ['kv_cache_usage', 'kv_cache_usage_cpu'],
      cold: ['least KV cache'],
      text: 'no kv_cache_usage, kv_cache_usage_cpu in what it reads: least KV cache stays cold (a random ready pod) for its pods.',
    });
    expect(vllm).toMatchObject({ missing: [], cold: [], text: 'every scoring strategy can score its pods.' });
    expect(blind.cold).toEqual(['least request', 'least KV cache']);
    expect(blind.missing).toEqual([
      'num_requests_running',
      'num_requests_waiting',
      'kv_cache_usage',
      'kv_cache_usage_cpu',
    ]);
  });
});

describe('write gates (ROUTE-8)', () => {
  it('deployment gate first, naming console.routing_writes_enabled; account gate second; otherwise writable', () => {
    expect(writeAccess(view({ writable: false, canWrite: false }))).toEqual({
      enabled: false,
      banner: 'Read-only on this deployment',
      tooltip: 'Routing writes are turned off on this deployment (console.routing_writes_enabled is false).',
      gate: 'console.routing_writes_enabled',
    });
    expect(writeAccess(view({ canWrite: false }))).toMatchObject({
      enabled: false,
      banner: 'Read-only for your account',
    });
    expect(writeAccess(view())).toEqual({ enabled: true, banner: null, tooltip: null, gate: null });
  });

  it('names the gate in force the node answers: INFERENCE_DEPLOY_ENABLED / INFERENCE_ADMIN_EMAILS when the environment sets them', () => {
    const gate = { deployment: 'INFERENCE_DEPLOY_ENABLED', operators: 'INFERENCE_ADMIN_EMAILS' };
    expect(writeAccess({ ...view({ writable: false }), gate })).toEqual({
      enabled: false,
      banner: 'Read-only on this deployment',
      tooltip: 'Routing writes are turned off on this deployment (INFERENCE_DEPLOY_ENABLED is false).',
      gate: 'INFERENCE_DEPLOY_ENABLED',
    });
    expect(writeAccess({ ...view({ canWrite: false }), gate })).toEqual({
      enabled: false,
      banner: 'Read-only for your account',
      tooltip: 'Only operators (INFERENCE_ADMIN_EMAILS) can change routing.',
      gate: 'INFERENCE_ADMIN_EMAILS',
    });
  });
});

describe('metric-profile control (ROUTE-5)', () => {
  const eff = (routes_engine: string | null) => ({ strategy: 'x', routes_engine, source: 'routing_key' as const });
  it('untouched, it shows the profile in force (effective, else desired, else `not reported`) and sends nothing', () => {
    expect(
      profileControl(
        { profile: null },
        { effective: eff('vllm'), desired: { strategy: 'x', routes_engine: 'clutch-layers' } },
      ),
    ).toEqual({
      value: '',
      options: [
        { value: '', label: 'vllm', group: 'in force' },
        { value: 'clutch-layers', label: 'clutch-layers', group: 'set' },
      ],
    });
    expect(
      profileControl(
        { profile: null },
        { effective: eff(null), desired: { strategy: 'x', routes_engine: 'clutch-layers' } },
      ).options[0].label,
    ).toBe('clutch-layers');
    expect(profileControl({ profile: null }, { effective: null, desired: null }).options[0]).toEqual({
      value: '',
      label: 'not reported',
      group: 'in force',
    });
  });
  it('picking a profile — even the one in force — is the pick that sends routesEngine', () => {
    const v = view({ effective: { strategy: 'round-robin', routes_engine: 'clutch-layers', source: 'routing_key' } });
    const picked = draftReducer(initialDraft(v), { type: 'profile', profile: 'clutch-layers' });
    expect(profileControl(picked, v).value).toBe('clutch-layers');
    expect(planApply(picked, v)).toEqual({
      ok: true,
      request: { strategy: 'round-robin', routesEngine: 'clutch-layers' },
    });
    expect(planApply(initialDraft(v), v)).toEqual({ ok: true, request: { strategy: 'round-robin' } });
  });
});

describe('draft: picker, Apply, Reset (ROUTE-5, ROUTE-7)', () => {
  it('the picker starts from effective, falling back to desired; buttons come from the data', () => {
    expect(initialDraft(view()).selected).toBe('round-robin');
    const fromDesired = view({
      effective: null,
      engineReporting: false,
      desired: { strategy: 'least-request', routes_engine: null },
    });
    expect(appliedStrategy(fromDesired)).toBe('least-request');
    expect(initialDraft(fromDesired).selected).toBe('least-request');
    expect(initialDraft(view({ effective: null, engineReporting: false })).selected).toBeNull();
    expect(strategyButtonFor('unknown-thing', view().strategies)).toBeNull();
  });

  it('the multi input is seeded with defaultMultiSpec, or holds the multi spec in force', () => {
    expect(initialDraft(view()).multiSpec).toBe('multi:least-request:3,least-kv-cache:1');
    const d = initialDraft(
      view({ effective: { strategy: 'multi:prefix-affinity:1', routes_engine: null, source: 'routing_key' } }),
    );
    expect(d).toMatchObject({ selected: 'multi', multiSpec: 'multi:prefix-affinity:1' });
  });

  it('Apply only when the draft differs from applied or a profile was picked; Reset returns to applied', () => {
    const v = view();
    let d: RoutingDraft = initialDraft(v);
    expect(canApply(d, v)).toBe(false);
    expect(canReset(d)).toBe(false);
    d = draftReducer(d, { type: 'select', name: 'least-request' });
    expect(canApply(d, v)).toBe(true);
    expect(canReset(d)).toBe(true);
    d = draftReducer(d, { type: 'select', name: 'round-robin' });
    expect(canApply(d, v)).toBe(false);
    d = draftReducer(d, { type: 'profile', profile: 'clutch-layers' });
    expect(canApply(d, v)).toBe(true);
    d = draftReducer(d, { type: 'reset', view: v });
    expect(d).toEqual(initialDraft(v));
    // The same multi spec as in force is nothing to publish.
    const m = view({
      effective: { strategy: 'multi:least-request:3,least-kv-cache:1', routes_engine: null, source: 'routing_key' },
    });
    expect(canApply(initialDraft(m), m)).toBe(false);
    expect(canApply(draftReducer(initialDraft(m), { type: 'multi-spec', text: 'multi:least-request:1' }), m)).toBe(
      true,
    );
  });

  it('read-only: Apply is never enabled', () => {
    for (const v of [view({ writable: false }), view({ canWrite: false })]) {
      const d = draftReducer(draftReducer(initialDraft(v), { type: 'select', name: 'least-request' }), {
        type: 'profile',
        profile: 'clutch-layers',
      });
      expect(canApply(d, v)).toBe(false);
    }
  });

  it('routesEngine is sent only when the operator picked a profile', () => {
    const v = view({ effective: { strategy: 'round-robin', routes_engine: 'clutch-layers', source: 'routing_key' } });
    const d = draftReducer(initialDraft(v), { type: 'select', name: 'least-request' });
    expect(planApply(d, v)).toEqual({ ok: true, request: { strategy: 'least-request' } });
    expect(planApply(draftReducer(d, { type: 'profile', profile: 'clutch-layers' }), v)).toEqual({
      ok: true,
      request: { strategy: 'least-request', routesEngine: 'clutch-layers' },
    });
    expect(
      planApply(
        draftReducer(draftReducer(d, { type: 'profile', profile: 'clutch-layers' }), {
          type: 'profile',
          profile: null,
        }),
        v,
      ),
    ).toEqual({
      ok: true,
      request: { strategy: 'least-request' },
    });
  });

  it('a bad multi spec is refused before publishing, with the exact message; editing clears it', () => {
    const v = view();
    let d = draftReducer(initialDraft(v), { type: 'select', name: 'multi' });
    d = draftReducer(d, { type: 'multi-spec', text: 'multi:least-request:3,,least-kv-cache:1' });
    const plan = planApply(d, v);
    expect(plan).toEqual({
      ok: false,
      field: 'strategy',
      message: 'Remove the empty entry and separate pairs with single commas.',
    });
    d = draftReducer(d, { type: 'invalid', message: MULTI_MESSAGES.emptyEntry, field: 'strategy' });
    expect(d.error).toEqual({ message: MULTI_MESSAGES.emptyEntry, field: 'strategy' });
    d = draftReducer(d, { type: 'multi-spec', text: 'least-kv-cache:2' });
    expect(d.error).toBeNull();
    expect(planApply(d, v)).toEqual({ ok: true, request: { strategy: 'multi:least-kv-cache:2' } });
  });

  it('an untouched draft follows new server state; a touched one is kept until Apply or Reset', () => {
    const before = view();
    const after = view({ effective: { strategy: 'least-request', routes_engine: null, source: 'routing_key' } });
    expect(draftReducer(initialDraft(before), { type: 'sync', view: after }).selected).toBe('least-request');
    const touched = draftReducer(initialDraft(before), { type: 'select', name: 'random' });
    expect(draftReducer(touched, { type: 'sync', view: after })).toBe(touched);
    const applied = draftReducer(draftReducer(touched, { type: 'profile', profile: 'clutch-layers' }), {
      type: 'applied',
    });
    expect(applied).toMatchObject({ profile: null, error: null, dirty: false });
    expect(draftReducer(applied, { type: 'sync', view: after }).selected).toBe('least-request');
  });
});

describe('routed upstreams (ROUTE-9)', () => {
  const row = (over: Partial<UpstreamRowWire>): UpstreamRowWire => ({
    model: 'm',
    endpoint: 'http://a/v1',
    engine: null,
    status: 'untried',
    answered: 0,
    notAnswered: 0,
    lastAnswerAt: null,
    lastAnswer: 'never',
    ...over,
  });

  it('untried / answering / not answering from real turns; `never` when it never answered', () => {
    const rows = upstreamRows([
      row({}),
      row({
        endpoint: 'http://b/v1',
        engine: 'clutch-layers',
        status: 'answering',
        answered: 3,
        lastAnswerAt: Date.UTC(2025, 0, 2, 3, 4, 5),
        lastAnswer: '2025-01-02T03:04:05.000Z',
      }),
      row({ endpoint: 'http://c/v1', status: 'not_answering', notAnswered: 2 }),
    ]);
    expect(rows.map((r) => [r.status, r.tone, r.answered, r.notAnswered, r.engine])).toEqual([
      ['untried', 'idle', '0', '0', '—'],
      ['answering', 'ok', '3', '0', 'clutch-layers'],
      ['not answering', 'bad', '0', '2', '—'],
    ]);
    expect(rows[0].lastAnswer).toBe('never');
    expect(rows[0].lastAnswerTitle).toBeNull();
    expect(rows[1].lastAnswer).toMatch(/^2025-01-0[12] \d\d:04:05$/);
    expect(rows[1].lastAnswerTitle).toBe('2025-01-02T03:04:05.000Z');
  });

  it('last answer: never stays never; garbage is —', () => {
    expect(formatLastAnswer('never')).toBe('never');
    expect(formatLastAnswer('not a time')).toBe('—');
  });
});
