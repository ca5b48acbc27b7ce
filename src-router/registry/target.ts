import type { Replica } from './identity-merge';

/** Where one request will run: an engine on this node, or another node of the cluster (ID-3). */
export interface Target {
  /** local engine, another node of the cluster, or a static-route endpoint (routing.static_routes). */
  kind: 'local' | 'remote' | 'static';
  /** The ID the client sees (cluster ID, possibly suffixed, ID-2). */
  clusterId: string;
  nodeId: string;
  /** The config's local ID on its node; engines and worker APIs are called with it. */
  localId: string;
  backend: string;
  /** Base URL of the remote node or the static endpoint. */
  url?: string;
  /** Model names in responses that are rewritten to `clusterId`. */
  names: string[];
  /** The config's capabilities (GUARD-2: a text-only model's image requests go to its guardian); unknown for static routes. */
  capabilities?: readonly string[];
  /** Frees what was reserved for this request (an STT route, STT-4) when it ends. */
  release?: () => void;
}

export function toTarget(clusterId: string, r: Replica): Target {
  return {
    kind: r.local ? 'local' : 'remote',
    clusterId,
    nodeId: r.nodeId,
    localId: r.record.localId,
    backend: r.record.backend,
    url: r.url ?? undefined,
    names: [...new Set([r.record.localId, r.record.publicId])],
    capabilities: r.record.capabilities,
  };
}

/** The pod a target runs on, as routing strategies and the scraper name it. */
export const podIdOf = (t: Pick<Target, 'kind' | 'nodeId' | 'localId' | 'url'>) =>
  t.kind === 'static' ? t.url! : `${t.nodeId}/${t.localId}`;
