import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Supervisor } from '../backends';
import type { ModelRegistry } from '../registry';
import type { LoadEvent } from '../backends';
import type { RequestRow } from '../store';

const ENGINE_STATES = ['stopped', 'starting', 'ready', 'stopping', 'failed'] as const;

/** The router's own Prometheus metrics: requests, durations, queue, loads, engine states. */
export class RouterMetrics {
  readonly registry = new Registry();
  private readonly requests;
  private readonly duration;
  private readonly queueWait;
  private readonly loads;
  private readonly fallbacks;

  constructor(supervisor: () => Supervisor | undefined, models: () => ModelRegistry | undefined) {
    const registers = [this.registry];
    this.requests = new Counter({ name: 'routerdesk_requests_total', help: 'Finished client requests', labelNames: ['model', 'endpoint', 'outcome'], registers });
    this.duration = new Histogram({ name: 'routerdesk_request_duration_seconds', help: 'Client request duration', labelNames: ['model', 'endpoint'], buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120], registers });
    this.queueWait = new Histogram({ name: 'routerdesk_queue_wait_seconds', help: 'Time a request waited for its engine (queue and load)', labelNames: ['model'], buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60], registers });
    this.loads = new Counter({ name: 'routerdesk_engine_loads_total', help: 'Engine loads', labelNames: ['model', 'success'], registers });
    this.fallbacks = new Counter({
      name: 'routerdesk_routing_fallbacks_total', help: 'Picks where the strategy in force lacked scraped metrics and took a random ready pod (ROUTE-2)',
      labelNames: ['model', 'missing'], registers,
    });
    new Gauge({
      name: 'routerdesk_lane_requests', help: 'Requests per lane by phase (inflight at the engine, waiting for it)', labelNames: ['lane', 'phase'], registers,
      collect() {
        this.reset();
        for (const l of supervisor()?.laneStatus() ?? []) {
          this.set({ lane: l.lane, phase: 'inflight' }, l.inflight);
          this.set({ lane: l.lane, phase: 'waiting' }, l.queued);
        }
      },
    });
    new Gauge({
      name: 'routerdesk_engine_state', help: '1 for the state each model engine is in', labelNames: ['model', 'local_id', 'state'], registers,
      collect() {
        this.reset();
        const sup = supervisor();
        for (const r of models()?.all() ?? []) {
          const state = sup?.state(r.localId) ?? 'stopped';
          for (const s of ENGINE_STATES) this.set({ model: r.publicId, local_id: r.localId, state: s }, s === state ? 1 : 0);
        }
      },
    });
  }

  /** Each label set's children, bound once: prom-client hashes the labels on every call otherwise (issue #14). */
  private readonly bound = new Map<string, { requests: { inc(): void }; duration: { observe(v: number): void }; queueWait: { observe(v: number): void } }>();

  request(row: RequestRow) {
    const key = `${row.model}\u0000${row.endpoint}\u0000${row.outcome}`;
    let b = this.bound.get(key);
    if (!b) {
      if (this.bound.size > 10_000) this.bound.clear();
      b = { requests: this.requests.labels(row.model, row.endpoint, row.outcome), duration: this.duration.labels(row.model, row.endpoint), queueWait: this.queueWait.labels(row.model) };
      this.bound.set(key, b);
    }
    b.requests.inc();
    b.duration.observe(row.durationMs / 1000);
    b.queueWait.observe(row.queueWaitMs / 1000);
  }

  routingFallback(model: string, missing: readonly string[]) {
    this.fallbacks.inc({ model, missing: missing.join(',') });
  }

  load(e: LoadEvent) {
    this.loads.inc({ model: e.publicId, success: String(e.success) });
  }
}
