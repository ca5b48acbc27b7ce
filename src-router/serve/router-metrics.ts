import { Counter, Gauge, Registry } from 'prom-client';
import type { LoadEvent, Supervisor } from '../backends';
import type { ModelRegistry } from '../registry';
import type { RequestRow } from '../store';
import type { DecisionInput } from '../store/decision-log-row';
import { BoundCounter, BoundHistogram } from './bound-metrics';
import { DecisionMetrics, MODEL_CAP } from './decision-metrics';
import { type LendingMetricsSource, registerLendingMetrics } from './lending-metrics';
import { ChildTree, OpenLabel } from './metric-labels';

const ENGINE_STATES = ['stopped', 'starting', 'ready', 'stopping', 'failed'] as const;

/** The router's own Prometheus metrics: requests, durations, queue, loads, engine states, lending and its decisions. */
export class RouterMetrics {
  readonly registry = new Registry();
  private readonly decisions: DecisionMetrics;
  private lendingSource?: LendingMetricsSource;
  private readonly requests;
  private readonly duration;
  private readonly queueWait;
  private readonly loads;
  private readonly fallbacks;
  /** Model names come from the cluster's catalog, which peers fill: at most MODEL_CAP of them, each of bounded length. */
  private readonly models = new OpenLabel(MODEL_CAP);

  constructor(supervisor: () => Supervisor | undefined, models: () => ModelRegistry | undefined) {
    const registers = [this.registry];
    this.requests = new BoundCounter('routerdesk_requests_total', 'Finished client requests', this.registry);
    this.duration = new BoundHistogram(
      'routerdesk_request_duration_seconds',
      'Client request duration',
      [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
      this.registry,
    );
    this.queueWait = new BoundHistogram(
      'routerdesk_queue_wait_seconds',
      'Time a request waited for its engine (queue and load)',
      [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60],
      this.registry,
    );
    this.loads = new Counter({
      name: 'routerdesk_engine_loads_total',
      help: 'Engine loads',
      labelNames: ['model', 'success'],
      registers,
    });
    this.fallbacks = new Counter({
      name: 'routerdesk_routing_fallbacks_total',
      help: 'Picks where the strategy in force lacked scraped metrics and took a random ready pod (ROUTE-2)',
      labelNames: ['model', 'missing'],
      registers,
    });
    new Gauge({
      name: 'routerdesk_lane_requests',
      help: 'Requests per lane by phase (inflight at the engine, waiting for it)',
      labelNames: ['lane', 'phase'],
      registers,
      collect() {
        this.reset();
        for (const l of supervisor()?.laneStatus() ?? []) {
          this.set({ lane: l.lane, phase: 'inflight' }, l.inflight);
          this.set({ lane: l.lane, phase: 'waiting' }, l.queued);
        }
      },
    });
    new Gauge({
      name: 'routerdesk_engine_state',
      help: '1 for the state each model engine is in',
      labelNames: ['model', 'local_id', 'state'],
      registers,
      collect() {
        this.reset();
        const sup = supervisor();
        for (const r of models()?.all() ?? []) {
          const state = sup?.state(r.localId) ?? 'stopped';
          for (const s of ENGINE_STATES)
            this.set({ model: r.publicId, local_id: r.localId, state: s }, s === state ? 1 : 0);
        }
      },
    });
    this.decisions = new DecisionMetrics(this.registry);
    registerLendingMetrics(this.registry, () => this.lendingSource, this.decisions);
  }

  /** One decision-log row the writer wrote (it calls this for every row once its batch is committed). */
  decision(row: DecisionInput): void {
    this.decisions.count(row);
  }

  /** Where the lending gauges read from, once lending is wired. */
  watchLending(source: LendingMetricsSource): void {
    this.lendingSource = source;
  }

  /** Each label set's children, bound once and found again without building a key per request. */
  private readonly bound = new ChildTree<{
    requests: { inc(): void };
    duration: { observe(v: number): void };
    queueWait: { observe(v: number): void };
  }>(['model', 'endpoint', 'outcome'], (l) => ({
    requests: this.requests.bind({ model: l.model, endpoint: l.endpoint, outcome: l.outcome }),
    duration: this.duration.bind({ model: l.model, endpoint: l.endpoint }),
    queueWait: this.queueWait.bind({ model: l.model }),
  }));

  request(row: RequestRow) {
    const b = this.bound.get(this.models.fold(row.model), row.endpoint, row.outcome);
    b.requests.inc();
    b.duration.observe(row.durationMs / 1000);
    b.queueWait.observe(row.queueWaitMs / 1000);
  }

  routingFallback(model: string, missing: readonly string[]) {
    this.fallbacks.inc({ model: this.models.fold(model), missing: missing.join(',') });
  }

  load(e: LoadEvent) {
    this.loads.inc({ model: this.models.fold(e.publicId), success: String(e.success) });
  }
}
