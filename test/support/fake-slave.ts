import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { NodeModelRecord, NodeSnapshot } from '../../src-router/contract';

/**
 * A peer that plays a slave over the real node API, for what a real slave would never do: advertise thousands of
 * models, hold a page open. It answers the master's snapshot poll with `models`, registers when asked, and hands
 * every other request to `route` (404 when it answers false). It counts requests per path and those open now.
 */
export interface FakeSlave {
  url: string;
  nodeId: string;
  /** Requests seen per path (no query). */
  seen: Map<string, number>;
  /** Requests of each path being answered now, and the most at once. */
  open: Map<string, number>;
  mostOpen: Map<string, number>;
  /** Requests the client closed before they were answered, per path. */
  closedEarly: Map<string, number>;
  /** Requests whose path `tracked` picks: seen in all, open now, and the most open at once. */
  tracked: { seen: number; open: number; mostOpen: number };
  setModels(models: NodeModelRecord[]): void;
  snapshot(): NodeSnapshot;
  /** POST the snapshot to the master's registration, with the cluster token. */
  register(masterUrl: string, token: string): Promise<number>;
  stop(): Promise<void>;
}

export type FakeRoute = (req: IncomingMessage, res: ServerResponse, path: string) => boolean;

export function fakeRecord(publicId: string, localId = publicId, hash = 'c1'): NodeModelRecord {
  return {
    publicId,
    localId,
    backend: 'sim',
    capabilities: ['text'],
    lane: 'text',
    configHash: hash,
    modelHash: null,
    contextsize: 4096,
    parallel: 1,
    engine: null,
    available: true,
  };
}

export async function startFakeSlave(opts: {
  nodeId: string;
  models?: NodeModelRecord[];
  route?: FakeRoute;
  /** Which paths `tracked` counts together (e.g. every pod's engine metrics). */
  track?: (path: string) => boolean;
}) {
  let models = opts.models ?? [];
  const seen = new Map<string, number>();
  const open = new Map<string, number>();
  const mostOpen = new Map<string, number>();
  const closedEarly = new Map<string, number>();
  const tracked = { seen: 0, open: 0, mostOpen: 0 };
  const bump = (m: Map<string, number>, k: string, by = 1) => m.set(k, (m.get(k) ?? 0) + by);
  let url = '';
  const snapshot = (): NodeSnapshot => ({
    nodeId: opts.nodeId,
    role: 'slave',
    publicUrl: url,
    version: '0.0.0-fake',
    settingsHash: 'fake',
    startedAt: new Date(0).toISOString(),
    runtimeStatus: true,
    models,
  });
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    bump(seen, path);
    bump(open, path);
    mostOpen.set(path, Math.max(mostOpen.get(path) ?? 0, open.get(path)!));
    const counted = opts.track?.(path) ?? false;
    if (counted) {
      tracked.seen++;
      tracked.open++;
      tracked.mostOpen = Math.max(tracked.mostOpen, tracked.open);
    }
    res.on('close', () => {
      bump(open, path, -1);
      if (counted) tracked.open--;
      if (!res.writableFinished) bump(closedEarly, path);
    });
    if (path === '/router/v1/node/snapshot') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify(snapshot()));
    }
    if (opts.route?.(req, res, path)) return;
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: 'not here', code: 'not_found' } }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const fake: FakeSlave = {
    url,
    nodeId: opts.nodeId,
    seen,
    open,
    mostOpen,
    closedEarly,
    tracked,
    setModels: (m) => (models = m),
    snapshot,
    async register(masterUrl, token) {
      const res = await fetch(`${masterUrl}/router/v1/node/register`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(snapshot()),
      });
      await res.arrayBuffer();
      return res.status;
    },
    async stop() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
  return fake;
}
