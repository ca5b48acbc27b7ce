import { describe, expect, it } from 'vitest';
import type { RoutingViewWire } from '../../src-router/contract';
import {
  buildRoutingView,
  MULTI_MESSAGES,
  SETTABLE_ROUTES_ENGINES,
  STRATEGIES,
  validateStrategy,
  WRITE_GATE,
} from '../../src-router/routing';

// The renderer parses a multi spec before publishing (ROUTE-3) with its own copy of the router's rules (it may
// import only contract/). This keeps the two answering the same, message for message. The renderer modules are
// loaded by path: they belong to the web TypeScript project, not this one.

interface RendererMultiSpec {
  MULTI_MESSAGES: Record<keyof typeof MULTI_MESSAGES, unknown>;
  parseMultiSpec(
    text: string,
    multiScorers: readonly string[],
  ): { ok: true; spec: string } | { ok: false; message: string };
}
interface RendererRoutingView {
  profileNotes(
    view: Pick<RoutingViewWire, 'profiles' | 'strategies'>,
  ): { name: string; reads: string[]; missing: string[]; cold: string[]; text: string }[];
  SETTABLE_PROFILES: readonly string[];
  DEPLOYMENT_GATE: string;
  OPERATORS_GATE: string;
}

const load = async <T>(rel: string): Promise<T> => (await import(new URL(rel, import.meta.url).pathname)) as T;

const SPECS = [
  '',
  ' ',
  'multi',
  'multi:',
  'multi: ',
  'least-request:3',
  'multi:least-request:3,least-kv-cache:1',
  'multi:least-request:3,,least-kv-cache:1',
  'multi:,',
  'multi:least-request:3,',
  'multi:least-request',
  'multi::3',
  'multi:least-request:',
  'multi:random:1',
  'multi:round-robin:2',
  'multi:multi:1',
  'multi:least:request:1',
  'multi:least-request:0',
  'multi:least-request:-2',
  'multi:least-request:abc',
  'multi:least-request:Infinity',
  'multi:least-request:1e3',
  'multi: least-request : 2 , prefix-affinity:0.5',
  'multi:prefix-affinity:1,least-kv-cache:x',
  'multi:random:0,,',
  'multi:least-request:3:4',
  'multi:least-kv-cache:0x10',
];

describe('renderer ↔ router parity of routing rules', () => {
  it('the multi spec messages are the router’s', async () => {
    const r = await load<RendererMultiSpec>('../../src-renderer/src/runtime/multi-spec.ts');
    for (const key of Object.keys(MULTI_MESSAGES) as (keyof typeof MULTI_MESSAGES)[]) {
      const mine = r.MULTI_MESSAGES[key];
      const theirs = MULTI_MESSAGES[key];
      if (typeof theirs === 'string') expect(mine).toBe(theirs);
      else
        expect((mine as (...a: unknown[]) => string)('x', ['a', 'b'])).toBe(
          (theirs as (...a: unknown[]) => string)('x', ['a', 'b']),
        );
    }
  });

  it('every spec: the renderer refuses with the router’s message, or accepts a spec the router accepts', async () => {
    const r = await load<RendererMultiSpec>('../../src-renderer/src/runtime/multi-spec.ts');
    const multiScorers = STRATEGIES.filter((s) => s.weightable).map((s) => s.name);
    for (const spec of SPECS) {
      const mine = r.parseMultiSpec(spec, multiScorers);
      // What the renderer would publish (the typed spec, prefixed) is what the router validates.
      const published = mine.ok ? mine.spec : spec.trim().startsWith('multi') ? spec : `multi:${spec.trim()}`;
      const theirs = validateStrategy(published, STRATEGIES);
      expect({ spec, ok: mine.ok, message: mine.ok ? null : mine.message }).toEqual({
        spec,
        ok: theirs.ok,
        message: theirs.ok ? null : theirs.message,
      });
    }
  });

  it('the settable profile and the gate names are the router’s', async () => {
    const v = await load<RendererRoutingView>('../../src-renderer/src/runtime/routing-view.ts');
    expect([...v.SETTABLE_PROFILES]).toEqual([...SETTABLE_ROUTES_ENGINES]);
    expect(v.DEPLOYMENT_GATE).toBe(WRITE_GATE.deployment);
    expect(v.OPERATORS_GATE).toBe(WRITE_GATE.operators);
  });

  it('the card’s profile notes from the router’s own view: llama.cpp has no KV gauge, so least KV cache stays cold; the others score all', async () => {
    const v = await load<RendererRoutingView>('../../src-renderer/src/runtime/routing-view.ts');
    const real = buildRoutingView({
      routingKey: 'k',
      strategies: STRATEGIES,
      desiredRaw: null,
      effectiveRaw: null,
      writable: true,
      canWrite: true,
    });
    const notes = Object.fromEntries(v.profileNotes(real).map((n) => [n.name, n]));
    expect(Object.keys(notes).sort()).toEqual(['clutch-layers', 'default', 'llama.cpp', 'vllm']);
    expect(notes['llama.cpp']).toMatchObject({
      reads: ['llamacpp:requests_processing', 'llamacpp:requests_deferred'],
      missing: ['kv_cache_usage', 'kv_cache_usage_cpu'],
      cold: ['least KV cache'],
    });
    for (const name of ['vllm', 'clutch-layers', 'default'])
      expect(notes[name]).toMatchObject({ cold: [], text: 'every scoring strategy can score its pods.' });
    expect(notes.vllm.reads).toContain('vllm:kv_cache_usage_perc');
    expect(notes.vllm.reads).not.toContain('vllm:gpu_cache_usage_perc');
  });
});
