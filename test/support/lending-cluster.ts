import type { SpawnOptions } from 'node:child_process';
import { freePort } from '../../src-router/backends';
import type { NetHosts } from '../../src-router/bench/net-hosts';
import type { ModelConfigInput, NodeConfigInput } from '../../src-router/config';
import { eventually, startNode, TEST_CONSOLE_TOKEN, type TestNode } from './node-harness';

export const CLUSTER_TOKEN = 'lending-test-token-0123456789';

/** A master and slaves on loopback ports, with fast lending settings (test scale). */
export interface LendingCluster {
  master: TestNode;
  slaves: Record<string, TestNode>;
  urls: Record<string, string>;
  stop(): Promise<void>;
  /** Console GET on the master. */
  console<T>(path: string): Promise<T>;
  /** Node API call with the cluster token. */
  node<T>(url: string, path: string, init?: RequestInit): Promise<T>;
  link(
    lane: 'text' | 'image',
    owner: [string, string],
    helper: [string, string],
    flags?: Record<string, boolean>,
  ): Promise<{ id: string }>;
  /** `extra`: more body fields (sim hooks such as `sim_token_time`, `sim_fail`). */
  chat(
    nodeId: string,
    model: string,
    opts?: { maxTokens?: number; stream?: boolean; signal?: AbortSignal; extra?: Record<string, unknown> },
  ): Promise<{ status: number; body: { model?: string; choices?: unknown[]; error?: unknown } }>;
  /** Every row of the cluster's decision log (gathered by the master) matching the filters, all pages, oldest first. */
  decisions(filter?: Record<string, string>): Promise<DecisionRowView[]>;
  /** URL of the master ('master') or a slave by name. */
  urlOf(nodeId: string): string;
}

/** The decision-log fields the lending tests read. */
export interface DecisionRowView {
  id: number;
  at: number;
  nodeId: string;
  kind: string;
  event: string;
  trigger: string | null;
  ownerNode: string | null;
  ownerModel: string | null;
  helperNode: string | null;
  helperModel: string | null;
  held: number | null;
  ownerDrainMs: number | null;
  helperSwitchMs: number | null;
  helperServiceMs: number | null;
  helperIdleMs: number | null;
  outcome: string | null;
  reason: string | null;
  slots: number | null;
  requestsOut: number | null;
  waitedMs: number | null;
  borrowedInBackend: number | null;
  requestId: string | null;
  details: Record<string, unknown> | null;
}

/** Oldest first, ties by node and id (rows from several nodes are told apart by (nodeId, id)). */
export const chronological = (rows: DecisionRowView[]) =>
  [...rows].sort((x, y) => x.at - y.at || (x.nodeId < y.nodeId ? -1 : x.nodeId > y.nodeId ? 1 : x.id - y.id));

export const fastLending = (extra: Record<string, unknown> = {}) => ({
  scheduling_refresh_interval: '400ms',
  scheduling_min_samples: 3,
  offload_probe_idle: '300ms',
  offload_restore_delay: '300ms',
  health_interval: '400ms',
  sync_interval: '400ms',
  ...extra,
});

export async function startLendingCluster(opts: {
  masterModels?: Record<string, ModelConfigInput>;
  slaves: Record<string, Record<string, ModelConfigInput>>;
  cluster?: Record<string, unknown>;
  /** More `cluster:` settings of one node ('master' or a slave name), over `cluster`. */
  clusterOf?: Record<string, Record<string, unknown>>;
  /** Extra environment per node ('master' or a slave name), e.g. ROUTERDESK_CLOCK_OFFSET_MS. */
  env?: Record<string, Record<string, string>>;
  /** The master's `console:` section (e.g. `operators`). */
  masterConsole?: NodeConfigInput['console'];
  /** More `server:` settings of the master (e.g. `api_keys`). */
  masterServer?: NodeConfigInput['server'];
  /** Each node on its own network host (named 'master' and as the slaves), port 8080 at its address. */
  hosts?: NetHosts;
}): Promise<LendingCluster> {
  const names = Object.keys(opts.slaves);
  const hosts = opts.hosts;
  const ports: Record<string, number> = { master: hosts ? 8080 : await freePort() };
  for (const n of names) ports[n] = hosts ? 8080 : await freePort();
  const addressOf = (n: string) => (hosts ? hosts.address(n) : '127.0.0.1');
  const urls = Object.fromEntries(Object.entries(ports).map(([k, p]) => [k, `http://${addressOf(k)}:${p}`]));
  const launch = (n: string) =>
    hosts ? { launch: (args: string[], o: SpawnOptions) => hosts.spawn(n, process.execPath, args, o) } : {};
  const slaves: Record<string, TestNode> = {};
  await Promise.all(
    names.map(async (n) => {
      const config: NodeConfigInput = {
        server: { port: ports[n], host: addressOf(n) },
        cluster: {
          role: 'slave',
          node_id: n,
          token: CLUSTER_TOKEN,
          master_url: urls.master,
          public_url: urls[n],
          ...fastLending({ ...opts.cluster, ...opts.clusterOf?.[n] }),
        } as NodeConfigInput['cluster'],
      };
      slaves[n] = await startNode({ models: opts.slaves[n], config, env: opts.env?.[n], ...launch(n) });
    }),
  );
  const master = await startNode({
    models: opts.masterModels ?? {},
    env: opts.env?.master,
    ...launch('master'),
    config: {
      server: { ...opts.masterServer, port: ports.master, host: addressOf('master') },
      ...(opts.masterConsole ? { console: opts.masterConsole } : {}),
      cluster: {
        role: 'master',
        node_id: 'master',
        token: CLUSTER_TOKEN,
        slave_urls: names.map((n) => urls[n]),
        ...fastLending({ ...opts.cluster, ...opts.clusterOf?.master }),
      } as NodeConfigInput['cluster'],
    },
  });
  const cluster: LendingCluster = {
    master,
    slaves,
    urls,
    async stop() {
      await Promise.all([master.stop(), ...Object.values(slaves).map((s) => s.stop())]);
    },
    console: (path) => master.console(path),
    urlOf: (nodeId) => (nodeId === 'master' ? master.url : urls[nodeId]),
    async decisions(filter = {}) {
      const rows: DecisionRowView[] = [];
      let cursor: string | null = null;
      do {
        const q = new URLSearchParams({ ...filter, limit: '1000', ...(cursor ? { cursor } : {}) });
        const page: { rows: DecisionRowView[]; nextCursor: string | null } = await master.console(
          `/router/v1/console/decisions?${q}`,
        );
        rows.push(...page.rows);
        cursor = page.nextCursor;
      } while (cursor);
      return chronological(rows);
    },
    async node<T>(url: string, path: string, init: RequestInit = {}) {
      const res = await fetch(`${url}${path}`, {
        ...init,
        headers: {
          authorization: `Bearer ${CLUSTER_TOKEN}`,
          'content-type': 'application/json',
          ...(init.headers as Record<string, string>),
        },
      });
      if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
      return (await res.json()) as T;
    },
    async link(lane, owner, helper, flags = {}) {
      const res = await fetch(
        `${master.url}/router/v1/site/${lane === 'text' ? 'text-routing-groups' : 'routing-groups'}`,
        {
          method: 'POST',
          headers: { authorization: `Bearer ${TEST_CONSOLE_TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            owner: { node_id: owner[0], model: owner[1] },
            helper: { node_id: helper[0], model: helper[1] },
            acknowledge_different_weights: true,
            ...flags,
          }),
        },
      );
      if (res.status !== 201) throw new Error(`link: ${res.status} ${await res.text()}`);
      const link = (await res.json()) as { id: string };
      // Applied on both ends (LEASE-1) before the test goes on. The held view lists only enrolled models' queues
      // (the offload state also lists a model that merely holds a runtime lane).
      for (const [nodeId, model] of [owner, helper]) {
        const url = nodeId === 'master' ? master.url : urls[nodeId];
        await eventually(
          async () =>
            (await cluster.node<{ models: { model: string }[] }>(url, '/router/v1/node/held')).models.some(
              (m) => m.model === model,
            ),
          { what: `${nodeId} enrolled ${model}` },
        );
      }
      return link;
    },
    async chat(nodeId, model, o = {}) {
      const url = nodeId === 'master' ? master.url : urls[nodeId];
      const res = await fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        signal: o.signal,
        body: JSON.stringify({
          model,
          messages: [{ role: 'user', content: 'hello there' }],
          max_tokens: o.maxTokens ?? 8,
          stream: o.stream ?? false,
          ...o.extra,
        }),
      });
      return {
        status: res.status,
        body: (o.stream ? { raw: await res.text() } : await res.json()) as { model?: string },
      };
    },
  };
  await eventually(
    async () =>
      (await master.console<{ nodes: { healthy: boolean }[] }>('/router/v1/console/cluster/nodes')).nodes.every(
        (n) => n.healthy,
      ),
    { what: 'cluster healthy' },
  );
  return cluster;
}

/** A node's router queues as `/router/v1/node/held` shows them (UI-2). */
export interface HeldItemView {
  id: string;
  state: string;
  firstArrival: string;
  borrowed: boolean;
  returned: boolean;
  stream: boolean;
}
export interface HeldView {
  nodeId: string;
  models: { model: string; depth: number; active: HeldItemView[]; held: HeldItemView[] }[];
}

/** Samples a node's held view every `everyMs` until stopped; `stop()` resolves after the last sample. */
export function watchHeld(
  c: LendingCluster,
  nodeId: string,
  onView: (v: HeldView, at: number) => void,
  everyMs = 10,
): { stop(): Promise<void> } {
  let on = true;
  const loop = (async () => {
    while (on) {
      try {
        onView(await c.node<HeldView>(c.urlOf(nodeId), '/router/v1/node/held'), Date.now());
      } catch {
        /* a node being stopped: keep sampling the others */
      }
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    async stop() {
      on = false;
      await loop;
    },
  };
}

/** A sim text model config (one request at a time, a stated context window: LLM-1 eligible). */
export const simText = (name: string, tokenTime: string, sim: Record<string, unknown> = {}): ModelConfigInput => ({
  name,
  backend: 'sim',
  capabilities: ['text'],
  contextsize: 4096,
  parallel: 1,
  sim: { load_time: '100ms', token_time: tokenTime, ...sim },
});
