/**
 * Prometheus gauges of lending read at scrape time: router queues per enrolled model, leases in force, borrowed jobs,
 * restores, fitted costs, the decision-log writer's backlog; on the master also the leases it holds for the cluster,
 * its decisions and the relays in flight. Nothing here runs on the request path.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Coordinator } from '../lending/coordinator';
import type { LendingNode } from '../lending/lending-node';
import type { BatchedWriterStats } from '../store/batched-writer';
import type { DecisionMetrics } from './decision-metrics';
import { MODEL_CAP, NODE_CAP } from './decision-metrics';
import { OpenLabel } from './metric-labels';

/** What the lending gauges read; each getter answers undefined until that part is wired. */
export interface LendingMetricsSource {
  nodeId: string;
  role: string;
  version: string;
  lending(): LendingNode | undefined;
  coordinator(): Coordinator | undefined;
  decisionLog(): { stats(): BatchedWriterStats } | undefined;
}

const STATES = ['queued', 'held', 'lent', 'active'] as const;

export function registerLendingMetrics(
  registry: Registry,
  source: () => LendingMetricsSource | undefined,
  decisions: DecisionMetrics,
): void {
  const registers = [registry];
  const nodes = new OpenLabel(NODE_CAP);
  const models = new OpenLabel(MODEL_CAP);
  const lending = () => source()?.lending();

  new Gauge({
    name: 'routerdesk_node_info',
    help: "Always 1: this node's id, cluster role and router version",
    labelNames: ['node_id', 'role', 'version'],
    registers,
    collect() {
      this.reset();
      const s = source();
      if (s) this.set({ node_id: nodes.fold(s.nodeId), role: s.role, version: s.version }, 1);
    },
  });
  new Gauge({
    name: 'routerdesk_lending_queue_requests',
    help: "Requests in each enrolled model's router queue by state (queued, held for a helper, lent, active at the engine) and origin (own, borrowed)",
    labelNames: ['model', 'state', 'origin'],
    registers,
    collect() {
      this.reset();
      for (const q of lending()?.queueCounts() ?? []) {
        const model = models.fold(q.model);
        decisions.knownModel(q.model);
        for (const s of STATES) {
          this.set({ model, state: s, origin: 'own' }, q.own[s]);
          this.set({ model, state: s, origin: 'borrowed' }, q.borrowed[s]);
        }
      }
    },
  });
  new Gauge({
    name: 'routerdesk_lending_borrowed_jobs',
    help: 'Borrowed jobs on this node as a helper now (at its engine or waiting in its router queue)',
    registers,
    collect() {
      this.set(lending()?.helper.borrowedInFlight() ?? 0);
    },
  });
  new Gauge({
    name: 'routerdesk_lending_lease_slots',
    help: "Leases in force on this owner, one series per owner model: the lease's slots (1 or 2)",
    labelNames: ['owner_model', 'helper_node', 'helper_model', 'probe'],
    registers,
    collect() {
      this.reset();
      const l = lending();
      for (const { model, grant } of l?.owner.leasesInForce() ?? []) {
        this.set(
          {
            owner_model: models.fold(model),
            helper_node: nodes.fold(grant.helper.nodeId),
            helper_model: models.fold(grant.helper.model),
            probe: String(grant.probe),
          },
          grant.slots,
        );
      }
      // An owner's links start their lent counter at zero, so a pair's series exists before its first lend.
      const self = source()?.nodeId;
      for (const link of l?.appliedLinks() ?? [])
        if (link.owner.nodeId === self) decisions.knownPair(link.owner, link.helper);
    },
  });
  new Gauge({
    name: 'routerdesk_lending_leases_in_force',
    help: 'Leases in force on this owner (all its models)',
    registers,
    collect() {
      this.set(lending()?.owner.leasesInForce().length ?? 0);
    },
  });
  new Counter({
    name: 'routerdesk_lending_restores_total',
    help: 'Lanes switched back to the model they held before borrowed work or a guardian displaced it (HELPER-4, GUARD-3), by outcome (ok, failed)',
    labelNames: ['outcome'],
    registers,
    collect() {
      this.reset();
      let ok = 0;
      let failed = 0;
      for (const c of lending()?.restorer.restores.values() ?? []) {
        ok += c.ok;
        failed += c.failed;
      }
      this.inc({ outcome: 'ok' }, ok);
      this.inc({ outcome: 'failed' }, failed);
    },
  });
  new Gauge({
    name: 'routerdesk_lending_restores_pending',
    help: 'Lane restores waiting for the node to be quiet',
    registers,
    collect() {
      this.set(lending()?.restorer.pending().length ?? 0);
    },
  });

  // PRICE-2 / PRICE-4: a job's time is base + per_work × work (work: expected answer tokens, or pixels × steps × images).
  const figures = () => lending()?.costFigures() ?? [];
  new Gauge({
    name: 'routerdesk_model_fit_base_seconds',
    help: "A model's fitted fixed time per job (for a constant fit: its mean job time); absent before min_samples",
    labelNames: ['model'],
    registers,
    collect() {
      this.reset();
      for (const f of figures())
        if (f.fit)
          this.set(
            { model: models.fold(f.model) },
            (f.fit.kind === 'scaled' ? f.fit.interceptMs : f.fit.meanMs) / 1000,
          );
    },
  });
  new Gauge({
    name: 'routerdesk_model_fit_seconds_per_work',
    help: "A model's fitted time per unit of work (token for text, pixel-step for images); 0 for a constant fit",
    labelNames: ['model'],
    registers,
    collect() {
      this.reset();
      for (const f of figures())
        if (f.fit) this.set({ model: models.fold(f.model) }, f.fit.kind === 'scaled' ? f.fit.slopeMsPerWork / 1000 : 0);
    },
  });
  new Gauge({
    name: 'routerdesk_model_fit_samples',
    help: "Requests the model's cost fit was made from",
    labelNames: ['model'],
    registers,
    collect() {
      this.reset();
      for (const f of figures()) if (f.fit) this.set({ model: models.fold(f.model) }, f.fit.samples);
    },
  });
  new Gauge({
    name: 'routerdesk_model_load_seconds',
    help: "A model's mean measured load time; absent before its first load",
    labelNames: ['model'],
    registers,
    collect() {
      this.reset();
      for (const f of figures()) if (f.loadMs !== null) this.set({ model: models.fold(f.model) }, f.loadMs / 1000);
    },
  });

  new Gauge({
    name: 'routerdesk_decision_log_pending_rows',
    help: "Decision-log rows queued in memory, not yet written to SQLite (the writer's backlog)",
    registers,
    collect() {
      this.set(source()?.decisionLog()?.stats().pending ?? 0);
    },
  });
  new Counter({
    name: 'routerdesk_decision_log_rows_total',
    help: 'Decision-log rows by what the writer did with them: written, dropped (queue full or closed), failed (SQLite refused)',
    labelNames: ['result'],
    registers,
    collect() {
      this.reset();
      const s = source()?.decisionLog()?.stats();
      this.inc({ result: 'written' }, s?.written ?? 0);
      this.inc({ result: 'dropped' }, s?.dropped ?? 0);
      this.inc({ result: 'failed' }, s?.failed ?? 0);
    },
  });

  // The master's view of the cluster.
  const coordinator = () => source()?.coordinator();
  new Gauge({
    name: 'routerdesk_lending_master_lease_slots',
    help: 'On the master: the leases it holds live for the cluster, one series per lease: its slots',
    labelNames: ['owner_node', 'owner_model', 'helper_node', 'helper_model', 'probe'],
    registers,
    collect() {
      this.reset();
      for (const g of coordinator()?.leases() ?? []) {
        this.set(
          {
            owner_node: nodes.fold(g.owner.nodeId),
            owner_model: models.fold(g.owner.model),
            helper_node: nodes.fold(g.helper.nodeId),
            helper_model: models.fold(g.helper.model),
            probe: String(g.probe),
          },
          g.slots,
        );
      }
    },
  });
  new Gauge({
    name: 'routerdesk_lending_master_leases_in_force',
    help: 'On the master: leases live for the cluster',
    registers,
    collect() {
      this.set(coordinator()?.leases().length ?? 0);
    },
  });
  new Counter({
    name: 'routerdesk_lending_master_decisions_total',
    help: 'On the master: lending decisions run (each polls the nodes and plans every link)',
    registers,
    collect() {
      this.reset();
      this.inc(coordinator()?.decisionsMade ?? 0);
    },
  });
  new Gauge({
    name: 'routerdesk_lending_master_relays_in_flight',
    help: 'On the master: lent requests being relayed now, per helper node',
    labelNames: ['helper_node'],
    registers,
    collect() {
      this.reset();
      for (const [helper, n] of coordinator()?.relaysByHelper() ?? []) this.set({ helper_node: nodes.fold(helper) }, n);
    },
  });
}
