import type { FastifyBaseLogger } from 'fastify';
import type { Supervisor } from './backends';
import type { NodeConfig } from './config';
import type { KeySpace } from './kv';
import { type ClusterCatalog, podIdOf, type Target } from './registry';
import {
  emptyUpstreamBook,
  LiveRoutingModule,
  MetricScraper,
  profileForPod,
  promptPrefixHash,
  recordTurn,
  type ScrapeTarget,
  type staticRouteTable,
  upstreamsSnapshot,
} from './routing';
import type { RouterMetrics } from './serve';

/**
 * A pod as the routing module knows it. Static-route endpoints are keyed by model and endpoint: one server can sit
 * in the route table under several models with different engine labels, and each is scraped with its own profile
 * (keyed by URL alone, the last model's profile would silently replace the others').
 */
export const routingPodId = (t: Target): string =>
  t.kind === 'static' ? staticPodId(t.clusterId, t.url!) : podIdOf(t);
const staticPodId = (model: string, endpoint: string) => `${model} ${endpoint}`;

export interface RoutingWiringDeps {
  config: NodeConfig;
  /** The static routes as shown (passwords hidden) and how each shown endpoint is called. */
  statics: ReturnType<typeof staticRouteTable>;
  keyspace: KeySpace;
  catalog: ClusterCatalog;
  supervisor: Supervisor;
  metrics: RouterMetrics;
  log: FastifyBaseLogger;
}

/**
 * The live routing module around the request path: strategy picks among replicas and static endpoints,
 * the router's own in-flight counts per pod, scraped engine metrics per pod, routed-upstream turns (ROUTE-9).
 */
export function createRoutingWiring(deps: RoutingWiringDeps) {
  const { config, log } = deps;
  const live = new LiveRoutingModule({
    keyspace: deps.keyspace,
    routingKey: config.routing.routing_key,
    defaultStrategy: config.routing.strategy,
    pollMs: config.routing.poll_interval,
    onApplied: (next, prev) => {
      log.info(`routing strategy applied: ${next.strategy.spec} (was ${prev.strategy.spec}; source ${next.source})`);
      syncTargets();
      // A changed static-route profile drops those pods' metrics: read them again now, not one interval later.
      if (next.routesEngine !== prev.routesEngine) void scraper.scrapeNow();
    },
    onFallback: (result, request) => deps.metrics.routingFallback(request.group ?? '', result.missing ?? []),
  });
  const scraper = new MetricScraper({ intervalMs: config.routing.scrape_interval });
  const inflight = new Map<string, number>();
  let book = emptyUpstreamBook();

  /** Scrape targets: loaded local engines, remote replicas through their node, static endpoints. */
  function syncTargets(): void {
    const targets: ScrapeTarget[] = [];
    const lanes = deps.supervisor.laneStatus();
    for (const entry of deps.catalog.all()) {
      for (const r of entry.replicas) {
        const podId = `${r.nodeId}/${r.record.localId}`;
        if (r.local) {
          const lane = lanes.find((l) => l.loaded === r.record.localId && l.port);
          if (lane) targets.push({ podId, url: `http://127.0.0.1:${lane.port}/metrics`, profile: r.record.engine });
        } else if (r.url && r.available) {
          targets.push({
            podId,
            url: `${r.url}/router/v1/node/engine-metrics/${encodeURIComponent(r.record.localId)}`,
            profile: r.record.engine,
            headers: { authorization: `Bearer ${config.cluster.token}` },
          });
        }
      }
    }
    const routesEngine = live.current().routesEngine;
    for (const [model, route] of Object.entries(deps.statics.shown)) {
      for (const endpoint of route.endpoints) {
        const { url, authorization } = deps.statics.call(endpoint);
        targets.push({
          podId: staticPodId(model, endpoint),
          url: `${url.replace(/\/+$/, '')}/metrics`,
          profile: profileForPod({ staticRoute: true, engine: route.engine }, routesEngine).name,
          ...(authorization ? { headers: { authorization } } : {}),
        });
      }
    }
    scraper.setTargets(targets);
  }

  return {
    live,
    scraper,
    syncTargets,
    /** The strategy in force picks one candidate (ROUTE-2: missing metrics → random ready pod, counted). */
    choose(group: string, candidates: Target[], body?: Record<string, unknown>): Target | undefined {
      const pods = candidates.map((t) => {
        const id = routingPodId(t);
        return { id, ready: true, inflight: inflight.get(id) ?? 0, metrics: scraper.metricsFor(id) };
      });
      const picked = live.pick(pods, { group, prefixHash: promptPrefixHash(body) });
      return picked.pod ? candidates.find((t) => routingPodId(t) === picked.pod!.id) : undefined;
    },
    /** Counts a request in flight at its pod until the returned function is called. */
    begin(target: Target): () => void {
      const id = routingPodId(target);
      inflight.set(id, (inflight.get(id) ?? 0) + 1);
      let done = false;
      return () => {
        if (done) return;
        done = true;
        inflight.set(id, Math.max(0, (inflight.get(id) ?? 1) - 1));
      };
    },
    turn(target: Target, answered: boolean): void {
      book = recordTurn(book, target.clusterId, target.url!, answered, Date.now());
    },
    upstreams: () => upstreamsSnapshot(deps.statics.shown, book),
    start(): void {
      syncTargets();
      live.start();
      scraper.start();
    },
    stop(): void {
      live.stop();
      scraper.stop();
    },
  };
}

export type RoutingWiring = ReturnType<typeof createRoutingWiring>;
