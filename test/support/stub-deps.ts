import type { HttpDeps } from '../../src-router/http/deps';

/**
 * HttpDeps for building the app without a node, to list its routes: the values route registration reads are real,
 * everything else is a stub no request reaches (no request is sent to an app built with these).
 */
export function stubDeps(fixed: Partial<HttpDeps> = {}): HttpDeps {
  const stub: unknown = new Proxy(function () {}, {
    get: (_t, k) => (k === 'then' ? undefined : stub),
    apply: () => stub,
  });
  const values: Partial<HttpDeps> = {
    nodeId: 'stub',
    role: 'standalone',
    version: '0.0.0',
    bodyLimit: 1 << 20,
    uploadLimit: 1 << 20,
    consoleToken: 'stub-console-token',
    clusterToken: 'stub-cluster-token',
    operators: [],
    staticRouteIds: [],
    guards: { allowedHosts: [], corsOrigins: [], apiKeys: [] },
    uiDir: undefined,
    ...fixed,
  };
  return new Proxy({} as HttpDeps, {
    get: (_t, k) => (typeof k === 'string' && k in values ? values[k as keyof HttpDeps] : stub),
  });
}
