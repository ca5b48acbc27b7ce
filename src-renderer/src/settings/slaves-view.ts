import type { ClusterNodeView } from '../../../src-router/contract';
import type { PillTone } from '../format';

/**
 * The Settings screen's list of a master's slaves: every configured slave URL with the node the master
 * polled there and its health, "not polled yet" until it did; other members the master lists come after. Pure;
 * tested in renderer-settings-form.test.ts.
 */

export interface SlaveRow {
  key: string;
  nodeId: string;
  url: string;
  health: 'healthy' | 'unreachable' | 'not polled yet';
  tone: PillTone;
  lastError: string | null;
}

const norm = (url: string) => url.trim().replace(/\/+$/, '');

export function slaveRows(nodes: ClusterNodeView[] | null, slaveUrls: string[]): SlaveRow[] {
  const others = (nodes ?? []).filter((n) => !n.local);
  const row = (n: ClusterNodeView): SlaveRow => ({
    key: n.nodeId,
    nodeId: n.nodeId,
    url: n.url ?? '',
    health: n.healthy ? 'healthy' : 'unreachable',
    tone: n.healthy ? 'ok' : 'bad',
    lastError: n.lastError,
  });
  const configured = slaveUrls.map(norm).filter(Boolean);
  const rows = configured.map((url): SlaveRow => {
    const n = others.find((o) => o.url !== null && norm(o.url) === url);
    return n
      ? { ...row(n), url }
      : { key: url, nodeId: '—', url, health: 'not polled yet', tone: 'idle', lastError: null };
  });
  return [...rows, ...others.filter((o) => o.url === null || !configured.includes(norm(o.url))).map(row)];
}
