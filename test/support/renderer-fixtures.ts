import type { RoutingViewWire } from '../../src-router/contract';

const effective = { strategy: 'round-robin', routes_engine: null, source: 'config_default' as const };

/** A `runtime.routing` answer for renderer tests: round-robin in force, nothing desired, writable. */
export const routingViewFixture = (
  over: Partial<RoutingViewWire> = {},
  routingKey = 'clutchcall:inference:routing',
): RoutingViewWire => ({
  routingKey,
  strategies: [
    { name: 'round-robin', label: 'round-robin', requires: [], weightable: false },
    { name: 'least-request', label: 'least request', requires: ['num_requests_running'], weightable: true },
    { name: 'multi', label: 'multi (weighted)', requires: ['num_requests_running'], weightable: false },
  ],
  multiScorers: ['least-request'],
  profiles: [
    {
      name: 'clutch-layers',
      reads: ['clutch_active_slots', 'clutch_queue_depth'],
      provides: ['num_requests_running', 'num_requests_waiting', 'kv_cache_usage', 'kv_cache_usage_cpu'],
    },
    {
      name: 'llama.cpp',
      reads: ['llamacpp:requests_processing', 'llamacpp:requests_deferred'],
      provides: ['num_requests_running', 'num_requests_waiting'],
    },
  ],
  desired: null,
  effective,
  engineReporting: true,
  inSync: true,
  writable: true,
  canWrite: true,
  defaultMultiSpec: 'multi:least-request:3,least-kv-cache:1',
  keyspaceReachable: true,
  gate: { deployment: 'console.routing_writes_enabled', operators: 'console.operators' },
  status: {
    routingKey,
    desired: null,
    effective,
    invalidReason: null,
    reporting: true,
    lastError: null,
    lastPollAt: 1,
    fallbackCount: 0,
  },
  ...over,
});
