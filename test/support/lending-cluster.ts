import { freePort } from '../../src-router/backends';
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
  link(lane: 'text' | 'image', owner: [string, string], helper: [string, string], flags?: Record<string, boolean>): Promise<{ id: string }>;
  chat(nodeId: string, model: string, opts?: { maxTokens?: number; stream?: boolean; signal?: AbortSignal }): Promise<{ status: number; body: { model?: string; choices?: unknown[]; error?: unknown } }>;
}

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
}): Promise<LendingCluster> {
  const names = Object.keys(opts.slaves);
  const ports: Record<string, number> = { master: await freePort() };
  for (const n of names) ports[n] = await freePort();
  const urls = Object.fromEntries(Object.entries(ports).map(([k, p]) => [k, `http://127.0.0.1:${p}`]));
  const slaves: Record<string, TestNode> = {};
  await Promise.all(
    names.map(async (n) => {
      const config: NodeConfigInput = {
        server: { port: ports[n] },
        cluster: { role: 'slave', node_id: n, token: CLUSTER_TOKEN, master_url: urls.master, public_url: urls[n], ...fastLending(opts.cluster) } as NodeConfigInput['cluster'],
      };
      slaves[n] = await startNode({ models: opts.slaves[n], config });
    }),
  );
  const master = await startNode({
    models: opts.masterModels ?? {},
    config: {
      server: { port: ports.master },
      cluster: { role: 'master', node_id: 'master', token: CLUSTER_TOKEN, slave_urls: names.map((n) => urls[n]), ...fastLending(opts.cluster) } as NodeConfigInput['cluster'],
    },
  });
  const cluster: LendingCluster = {
    master, slaves, urls,
    async stop() {
      await Promise.all([master.stop(), ...Object.values(slaves).map((s) => s.stop())]);
    },
    console: (path) => master.console(path),
    async node<T>(url: string, path: string, init: RequestInit = {}) {
      const res = await fetch(`${url}${path}`, { ...init, headers: { authorization: `Bearer ${CLUSTER_TOKEN}`, 'content-type': 'application/json', ...(init.headers as Record<string, string>) } });
      if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
      return (await res.json()) as T;
    },
    async link(lane, owner, helper, flags = {}) {
      const res = await fetch(`${master.url}/router/v1/site/${lane === 'text' ? 'text-routing-groups' : 'routing-groups'}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TEST_CONSOLE_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ owner: { node_id: owner[0], model: owner[1] }, helper: { node_id: helper[0], model: helper[1] }, acknowledge_different_weights: true, ...flags }),
      });
      if (res.status !== 201) throw new Error(`link: ${res.status} ${await res.text()}`);
      const link = (await res.json()) as { id: string };
      // Applied on both ends (LEASE-1) before the test goes on.
      for (const [nodeId, model] of [owner, helper]) {
        const url = nodeId === 'master' ? master.url : urls[nodeId];
        await eventually(async () => (await cluster.node<{ models: { model: string }[] }>(url, '/router/v1/node/offload/state')).models.some((m) => m.model === model), { what: `${nodeId} enrolled ${model}` });
      }
      return link;
    },
    async chat(nodeId, model, o = {}) {
      const url = nodeId === 'master' ? master.url : urls[nodeId];
      const res = await fetch(`${url}/v1/chat/completions`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, signal: o.signal,
        body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hello there' }], max_tokens: o.maxTokens ?? 8, stream: o.stream ?? false }),
      });
      return { status: res.status, body: (o.stream ? { raw: await res.text() } : await res.json()) as { model?: string } };
    },
  };
  await eventually(async () => (await master.console<{ nodes: { healthy: boolean }[] }>('/router/v1/console/cluster/nodes')).nodes.every((n) => n.healthy), { what: 'cluster healthy' });
  return cluster;
}
