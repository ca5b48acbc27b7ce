import { clusterApiPrefix } from '../../../src-router/contract';

/**
 * Where a console or site call goes for the selected cluster (UI-5). The local cluster keeps its paths; a remote
 * one goes through the local node's proxy: `/router/v1/console/X` → `${clusterApiPrefix(id)}/console/X`,
 * `/router/v1/site/X` → `${clusterApiPrefix(id)}/site/X`. Pure.
 */

export const LOCAL_CLUSTER = 'local';

const MAPPED = [
  ['/router/v1/console/', 'console/'],
  ['/router/v1/site/', 'site/'],
] as const;

export function clusterPath(cluster: string | null | undefined, path: string): string {
  if (!cluster || cluster === LOCAL_CLUSTER) return path;
  for (const [from, to] of MAPPED)
    if (path.startsWith(from)) return `${clusterApiPrefix(cluster)}/${to}${path.slice(from.length)}`;
  return path;
}

/** The address parameter that keeps the selected cluster through a reload. */
export const CLUSTER_PARAM = 'cluster';

/** The cluster the address names (`?cluster=ID`); the local one when it names none. */
export function clusterFromHref(href: string): string {
  const id = new URL(href).searchParams.get(CLUSTER_PARAM);
  return id ? id : LOCAL_CLUSTER;
}

/** The same address with `cluster` selected (the local one: no parameter), as a path for history. */
export function hrefWithCluster(href: string, cluster: string): string {
  const url = new URL(href);
  if (cluster === LOCAL_CLUSTER) url.searchParams.delete(CLUSTER_PARAM);
  else url.searchParams.set(CLUSTER_PARAM, cluster);
  return `${url.pathname}${url.search}${url.hash}`;
}
