/**
 * Lending clusters for the benchmarks: a master (no models) and slaves (`Trio`: `owner` and `helper`; `Cluster`: any
 * number), each a real `routerdesk node` process on loopback with its own engines; links made through the site API;
 * what each node reports (lending state, lanes, the gathered decision log); bursts of chat requests with their latencies.
 */
import type { Agent } from 'node:http';
import { freePort } from '../backends/free-port';
import type { ModelConfigInput, NodeConfigInput } from '../config';
import type { CostFit } from '../costs/fit';
import { chatBody, getJson, postJson } from './http-client';
import type { NetHosts } from './net-hosts';
import { BENCH_CONSOLE_TOKEN, type BenchScope, type CliProcess, type Launch, sleep, until } from './scope';

export const TRIO_CLUSTER_TOKEN = 'bench-cluster-token-0123456789';

/** Lending settings at benchmark scale (as the integration tests use). */
export const FAST_LENDING = {
  scheduling_refresh_interval: '400ms',
  scheduling_min_samples: 3,
  offload_probe_idle: '300ms',
  offload_restore_delay: '300ms',
  health_interval: '400ms',
  sync_interval: '400ms',
};

const linkPath = (lane: 'text' | 'image') => (lane === 'text' ? 'text-routing-groups' : 'routing-groups');
const consoleAuth = { authorization: `Bearer ${BENCH_CONSOLE_TOKEN}` };
const clusterAuth = { authorization: `Bearer ${TRIO_CLUSTER_TOKEN}` };

export interface TrioOptions {
  owner: Record<string, ModelConfigInput>;
  helper: Record<string, ModelConfigInput>;
  /** Extra cluster settings for every node. */
  cluster?: Record<string, unknown>;
  /** models.startup_model per slave (loaded at boot). */
  startup?: { owner?: string; helper?: string };
  /** backend settings of the slaves (e.g. engine_nice). */
  backend?: NodeConfigInput['backend'];
  /** Each node on its own network host (hosts named master, owner, helper), port 8080 at its address; default: loopback. */
  hosts?: NetHosts;
  /** More cluster settings of one node, over `cluster`. */
  clusterOf?: Partial<Record<'master' | 'owner' | 'helper', Record<string, unknown>>>;
}

export interface ModelLendingState {
  model: string;
  loaded: boolean;
  fit: CostFit | null;
  loadMs: number | null;
}

export interface LaneView {
  lane: string;
  loaded: string | null;
  inflight: number;
  queued: number;
  port: number | null;
}

export interface DecisionView {
  at: number;
  nodeId: string;
  kind: string;
  event: string;
  outcome: string | null;
  reason: string | null;
  ownerModel: string | null;
  helperModel: string | null;
}

export interface BurstResult {
  makespanMs: number;
  /** Each request's latency, in the order sent. */
  latencies: number[];
  /** When each answer arrived (unix ms). */
  endedAt: number[];
}

/** A master and any number of slaves, each a real `routerdesk node` process, named by node ID. */
export interface ClusterOptions {
  /** Each slave's model configs (file name → config), keyed by node ID. */
  nodes: Record<string, Record<string, ModelConfigInput>>;
  /** Extra cluster settings for every node. */
  cluster?: Record<string, unknown>;
  /** More cluster settings of one node (or of `master`), over `cluster`. */
  clusterOf?: Record<string, Record<string, unknown>>;
  /** models.startup_model per slave (loaded at boot). */
  startup?: Record<string, string>;
  /** backend settings of the slaves (e.g. engine_nice). */
  backend?: NodeConfigInput['backend'];
  /** The master's routing settings (its strategy among replicas). */
  routing?: NodeConfigInput['routing'];
  /** Each node on its own network host (named as the node, the master `master`), port 8080 at its address; default: loopback. */
  hosts?: NetHosts;
}

/** A model on a node, as links name it. */
export interface NodeModel {
  node: string;
  model: string;
}

/**
 * A lending cluster of any size: links made through the site API (either lane), what each node reports, the
 * decision log the master gathers. `Trio` is the two-slave case the single-pair benchmarks use.
 */
export class Cluster {
  protected constructor(
    readonly master: CliProcess,
    readonly nodes: Record<string, CliProcess>,
  ) {}

  static async startNodes(scope: BenchScope, o: ClusterOptions): Promise<Cluster> {
    const { master, nodes } = await Cluster.boot(scope, o);
    return new Cluster(master, nodes);
  }

  protected static async boot(
    scope: BenchScope,
    o: ClusterOptions,
  ): Promise<{ master: CliProcess; nodes: Record<string, CliProcess> }> {
    const hosts = o.hosts;
    const ids = Object.keys(o.nodes);
    const port = async () => (hosts ? 8080 : await freePort());
    const mp = await port();
    const ports: Record<string, number> = {};
    for (const id of ids) ports[id] = await port();
    const host = (name: string) => (hosts ? hosts.address(name) : '127.0.0.1');
    const launch = (name: string): Launch | undefined =>
      hosts ? (command, args, options) => hosts.spawn(name, command, args, options) : undefined;
    const url = (name: string, p: number) => `http://${host(name)}:${p}`;
    const cluster = (name: string) => ({ ...FAST_LENDING, ...o.cluster, ...o.clusterOf?.[name] });
    const slave = (id: string): NodeConfigInput => ({
      server: { port: ports[id], host: host(id) },
      cluster: {
        role: 'slave',
        node_id: id,
        token: TRIO_CLUSTER_TOKEN,
        master_url: url('master', mp),
        public_url: url(id, ports[id]),
        ...cluster(id),
      } as NodeConfigInput['cluster'],
      ...(o.startup?.[id] ? { models: { startup_model: o.startup[id] } } : {}),
      ...(o.backend ? { backend: o.backend } : {}),
    });
    // Several nodes booting at once on a shared machine: more time than one node's default.
    const bootMs = 20_000 + 10_000 * Math.max(0, ids.length - 2);
    const [master, ...slaves] = await Promise.all([
      scope.startNode(
        {},
        {
          server: { port: mp, host: host('master') },
          cluster: {
            role: 'master',
            node_id: 'master',
            token: TRIO_CLUSTER_TOKEN,
            slave_urls: ids.map((id) => url(id, ports[id])),
            ...cluster('master'),
          } as NodeConfigInput['cluster'],
          ...(o.routing ? { routing: o.routing } : {}),
        },
        launch('master'),
        bootMs,
      ),
      ...ids.map((id) => scope.startNode(o.nodes[id], slave(id), launch(id), bootMs)),
    ]);
    await until(
      async () => {
        const { nodes } = await getJson<{ nodes: { healthy: boolean }[] }>(
          `${master.url}/router/v1/console/cluster/nodes`,
          consoleAuth,
        );
        return nodes.length === ids.length + 1 && nodes.every((n) => n.healthy);
      },
      'the cluster to be healthy',
      30_000,
      100,
    );
    return { master, nodes: Object.fromEntries(ids.map((id, i) => [id, slaves[i]])) };
  }

  node(id: string): CliProcess {
    const n = this.nodes[id];
    if (!n) throw new Error(`no node ${id} in this cluster`);
    return n;
  }

  /** A link owner → helper on `lane` (local IDs), applied on both ends before it returns. */
  async linkModels(
    owner: NodeModel,
    helper: NodeModel,
    flags: { load_if_unloaded?: boolean; restore_after_borrow?: boolean } = {},
    lane: 'text' | 'image' = 'text',
  ): Promise<string> {
    const res = await fetch(`${this.master.url}/router/v1/site/${linkPath(lane)}`, {
      method: 'POST',
      headers: { ...consoleAuth, 'content-type': 'application/json' },
      body: JSON.stringify({
        owner: { node_id: owner.node, model: owner.model },
        helper: { node_id: helper.node, model: helper.model },
        acknowledge_different_weights: true,
        ...flags,
      }),
    });
    if (res.status !== 201) throw new Error(`creating the link: ${res.status} ${await res.text()}`);
    const { id } = (await res.json()) as { id: string };
    for (const { node, model } of [owner, helper]) {
      await until(
        async () =>
          (
            await getJson<{ models: { model: string }[] }>(`${this.node(node).url}/router/v1/node/held`, clusterAuth)
          ).models.some((m) => m.model === model),
        `${model} enrolled`,
      );
    }
    return id;
  }

  /** Deletes every link of both lanes. */
  async unlinkAll(): Promise<void> {
    for (const lane of ['text', 'image'] as const) {
      const { links } = await getJson<{ links: { id: string }[] }>(
        `${this.master.url}/router/v1/site/${linkPath(lane)}`,
        consoleAuth,
      );
      for (const l of links) {
        const res = await fetch(`${this.master.url}/router/v1/site/${linkPath(lane)}/${encodeURIComponent(l.id)}`, {
          method: 'DELETE',
          headers: consoleAuth,
        });
        if (res.status !== 204) throw new Error(`deleting link ${l.id}: ${res.status} ${await res.text()}`);
      }
    }
  }

  /** A model's fit and load cost as its node reports them to the master (enrolled models and lane holders only). */
  async modelState(node: CliProcess, model: string): Promise<ModelLendingState> {
    const s = await getJson<{ models: ModelLendingState[] }>(`${node.url}/router/v1/node/offload/state`, clusterAuth);
    const m = s.models.find((x) => x.model === model);
    if (!m) throw new Error(`${model} is not in its node's lending state`);
    return m;
  }

  async lanes(node: CliProcess): Promise<LaneView[]> {
    return (await getJson<{ lanes: LaneView[] }>(`${node.url}/router/v1/console/lanes`, consoleAuth)).lanes;
  }

  /** Every decision the master gathers from the cluster since `since` (unix ms). */
  async decisions(since: number): Promise<DecisionView[]> {
    const rows: DecisionView[] = [];
    let cursor: string | null = null;
    do {
      const q = new URLSearchParams({ limit: '1000', from: String(since), ...(cursor ? { cursor } : {}) });
      const page: { rows: DecisionView[]; nextCursor: string | null } = await getJson(
        `${this.master.url}/router/v1/console/decisions?${q}`,
        consoleAuth,
      );
      rows.push(...page.rows);
      cursor = page.nextCursor;
    } while (cursor);
    return rows.sort((a, b) => a.at - b.at);
  }

  /** Requests the engine behind a node's lane has received so far (sim engines). */
  async engineRequests(node: CliProcess, lane = 'text'): Promise<number> {
    const port = (await this.lanes(node)).find((l) => l.lane === lane)?.port;
    if (!port) return 0;
    return (await getJson<{ requests: number }>(`http://127.0.0.1:${port}/sim/stats`)).requests;
  }

  /** Nothing in flight or queued on any slave, then a pause for leases and restores to clear. */
  async settle(pauseMs = 700): Promise<void> {
    await until(
      async () =>
        (await Promise.all(Object.values(this.nodes).map((n) => this.lanes(n))))
          .flat()
          .every((l) => l.inflight === 0 && l.queued === 0),
      'the slaves to drain',
      60_000,
      50,
    );
    await sleep(pauseMs);
  }
}

/** The single-pair cluster: a master, an `owner` slave and a `helper` slave. */
export class Trio extends Cluster {
  get owner(): CliProcess {
    return this.node('owner');
  }

  get helper(): CliProcess {
    return this.node('helper');
  }

  static async start(scope: BenchScope, o: TrioOptions): Promise<Trio> {
    const { master, nodes } = await Cluster.boot(scope, {
      nodes: { owner: o.owner, helper: o.helper },
      cluster: o.cluster,
      clusterOf: o.clusterOf,
      backend: o.backend,
      hosts: o.hosts,
      startup: {
        ...(o.startup?.owner ? { owner: o.startup.owner } : {}),
        ...(o.startup?.helper ? { helper: o.startup.helper } : {}),
      },
    });
    return new Trio(master, nodes);
  }

  /** A text link owner/`ownerModel` → helper/`helperModel` (local IDs), applied on both ends before it returns. */
  async link(
    ownerModel: string,
    helperModel: string,
    flags: { load_if_unloaded?: boolean; restore_after_borrow?: boolean } = {},
  ): Promise<void> {
    await this.linkModels({ node: 'owner', model: ownerModel }, { node: 'helper', model: helperModel }, flags);
  }
}

/** Sends every body at once to `node`'s chat API and waits for all answers (each must be 200). */
export async function burst(node: CliProcess, agent: Agent, bodies: Record<string, unknown>[]): Promise<BurstResult> {
  const t0 = performance.now();
  const results = await Promise.all(
    bodies.map(async (body) => {
      const r = await postJson(`${node.url}/v1/chat/completions`, body, agent);
      if (r.status !== 200) throw new Error(`chat at ${node.url}: ${r.status} ${r.body.slice(0, 300)}`);
      return { ms: r.totalMs, at: Date.now() };
    }),
  );
  return { makespanMs: performance.now() - t0, latencies: results.map((r) => r.ms), endedAt: results.map((r) => r.at) };
}

/** `n` chat bodies for `model`, with max_tokens from `tokens` (cycled). */
export const bodies = (model: string, n: number, tokens: number[]) =>
  Array.from({ length: n }, (_, i) => chatBody(model, tokens[i % tokens.length]));

/** Sends the bodies one after another. */
export async function sequential(node: CliProcess, agent: Agent, list: Record<string, unknown>[]): Promise<number[]> {
  const out: number[] = [];
  for (const b of list) {
    const r = await postJson(`${node.url}/v1/chat/completions`, b, agent);
    if (r.status !== 200) throw new Error(`chat at ${node.url}: ${r.status} ${r.body.slice(0, 300)}`);
    out.push(r.totalMs);
  }
  return out;
}

/** A fit as an affine job cost (work → ms); null when there is no fit. A constant fit prices every size at its mean. */
export function fitCost(fit: CostFit | null): ((work: number) => number) | null {
  if (!fit) return null;
  if (fit.kind === 'constant') return () => fit.meanMs;
  return (w) => fit.interceptMs + fit.slopeMsPerWork * w;
}
