import { Readable, Transform } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ClusterDirectory } from '../cluster/profiles/cluster-directory';
import { type ClusterView, clusterProfileCreateSchema, clusterProfilePatchSchema, RouterError } from '../contract';
import { isOperator, requireOperator, requireToken } from './auth';
import { clientGone } from './client-gone';
import type { HttpDeps } from './deps';
import { parseBody } from './errors';

/** Answer headers passed back from a remote (never its cookies or connection headers). */
const PASSED_HEADERS = ['content-type', 'content-disposition', 'cache-control', 'x-routerdesk-served-by'];

/** Remote reads that need an operator there, so here too: the first path segment under each API. */
const OPERATOR_READS: Record<'console' | 'site', readonly string[]> = {
  console: ['settings', 'model-configs', 'model-files'],
  site: [],
};

/**
 * Connection profiles and the cluster proxy (UI-5), behind the local console token:
 * `/router/v1/console/clusters` lists the local cluster and every profile (never a token) and keeps profiles;
 * `/router/v1/console/clusters/:id/{console,site}/…` forwards to `/router/v1/{console,site}/…` on that cluster with
 * its stored token — reads and writes, streams and downloads — bounded in time; `:id` `local` is this node itself.
 * The stored token is usually an operator's there: a remote write, or a read of an operator-only remote route, needs
 * an operator's token here.
 */
export async function clusterRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  const dir = (): ClusterDirectory => deps.clusters;
  app.register(async (scope) => {
    scope.addHook('onRequest', requireToken([deps.consoleToken, ...deps.operators], 'console'));
    const operatorOnly = (request: FastifyRequest) => requireOperator(deps, request, 'change connection profiles');

    scope.get('/router/v1/console/clusters', async () => ({ clusters: [localView(deps), ...(await dir().list())] }));

    scope.post('/router/v1/console/clusters', async (request, reply) => {
      operatorOnly(request);
      const view = await dir().create(parseBody(clusterProfileCreateSchema, request.body));
      request.log.info({ cluster: view.id, url: view.url }, 'cluster profile added');
      return reply.status(201).send(view);
    });

    scope.patch<{ Params: { id: string } }>('/router/v1/console/clusters/:id', async (request) => {
      operatorOnly(request);
      if (request.params.id === 'local')
        throw new RouterError(400, 'local_cluster', 'the local cluster is this node: it has no profile to change');
      return dir().update(request.params.id, parseBody(clusterProfilePatchSchema, request.body));
    });

    scope.delete<{ Params: { id: string } }>('/router/v1/console/clusters/:id', async (request, reply) => {
      operatorOnly(request);
      if (request.params.id === 'local')
        throw new RouterError(400, 'local_cluster', 'the local cluster is this node: it cannot be removed');
      dir().delete(request.params.id);
      return reply.status(204).send();
    });

    for (const api of ['console', 'site'] as const) {
      scope.route<{ Params: { id: string; '*': string } }>({
        method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
        url: `/router/v1/console/clusters/:id/${api}/*`,
        handler: async (request, reply) => {
          const segments = canonicalSegments(request.params['*']);
          const path = `/router/v1/${api}/${segments.map(encodeURIComponent).join('/')}${queryOf(request.url)}`;
          if (request.params.id === 'local') return forwardLocal(app, request, reply, path);
          const write = request.method !== 'GET' && request.method !== 'HEAD';
          if ((write || operatorRead(api, segments)) && !isOperator(deps, request)) {
            request.log.warn(
              { cluster: request.params.id, method: request.method, path: `/router/v1/${api}/${segments.join('/')}` },
              'remote cluster call refused: not an operator',
            );
            requireOperator(
              deps,
              request,
              write ? 'change a remote cluster' : `read a remote cluster's ${segments[0]}`,
            );
          }
          return forwardRemote(dir(), request, reply, path);
        },
      });
    }
  });
}

/**
 * Whether the remote call reads an operator-only route. A path into the remote's own proxy
 * (`clusters/:id/{console,site}/…`, its `local` included) is judged by where that proxy sends it.
 */
function operatorRead(api: 'console' | 'site', segments: readonly string[]): boolean {
  if (
    api === 'console' &&
    segments[0] === 'clusters' &&
    segments.length >= 3 &&
    (segments[2] === 'console' || segments[2] === 'site')
  ) {
    return operatorRead(segments[2], segments.slice(3));
  }
  return OPERATOR_READS[api].includes(segments[0]?.toLowerCase() ?? '');
}

function localView(deps: HttpDeps): ClusterView {
  return {
    id: 'local',
    name: 'local',
    local: true,
    url: null,
    reachable: true,
    role: deps.role,
    nodeId: deps.nodeId,
    version: deps.version,
    lastError: null,
    checkedAt: new Date().toISOString(),
  };
}

/**
 * The path under the API as the remote will route it: the router's decoded wildcard, `.` and `..` resolved and empty
 * segments dropped. It is sent re-encoded segment by segment, so what is checked here is what the remote matches.
 */
function canonicalSegments(star: string): string[] {
  const out: string[] = [];
  for (const part of star.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (!out.length)
        throw new RouterError(400, 'invalid_path', 'the path leaves the remote API it names', 'invalid_request_error');
      out.pop();
    } else out.push(part);
  }
  return out;
}

const queryOf = (url: string) => {
  const i = url.indexOf('?');
  return i < 0 ? '' : url.slice(i);
};

const bodyOf = (request: FastifyRequest) =>
  request.body === undefined || request.method === 'GET' ? undefined : JSON.stringify(request.body);

/**
 * This node itself, through its own routes: the same auth and answers as a direct call. The answer streams through
 * (its producer waits while the client reads slowly, so nothing is held whole) and stops when the client leaves.
 */
async function forwardLocal(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, path: string) {
  const body = bodyOf(request);
  const gone = clientGone(reply);
  let inner: { destroy(): unknown } | undefined;
  gone.onAbort(() => inner?.destroy());
  let res: Awaited<ReturnType<typeof app.inject>>;
  try {
    res = await app.inject({
      method: request.method as 'GET',
      url: path,
      headers: {
        authorization: request.headers.authorization ?? '',
        accept: request.headers.accept ?? 'application/json',
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      payload: body,
      payloadAsStream: true,
      signal: gone.signal,
    });
  } catch (err) {
    // The client left before the answer began: nobody to answer.
    if (gone.aborted) return reply;
    throw err;
  }
  // Closing the inner response ends the route's answer there: its stream is destroyed, its gathers aborted.
  inner = res.raw.res;
  if (gone.aborted) {
    inner.destroy();
    return reply;
  }
  for (const h of PASSED_HEADERS) {
    const v = res.headers[h];
    if (typeof v === 'string') reply.header(h, v);
  }
  return reply.status(res.statusCode).send(res.stream());
}

/** A remote cluster, with its stored token: bounded in time; a clear 502/504 naming the cluster when it cannot answer. */
async function forwardRemote(dir: ClusterDirectory, request: FastifyRequest, reply: FastifyReply, path: string) {
  const id = (request.params as { id: string }).id;
  const target = dir.target(id);
  const body = bodyOf(request);
  const ctl = new AbortController();
  const headersMs = dir.remoteTimeoutMs;
  const headersTimer = setTimeout(() => ctl.abort(new Error('headers timeout')), headersMs);
  // The response's close, not the request's: a request closes once its body has been read, the client still there.
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished) ctl.abort(new Error('client left'));
  });
  let res: Response;
  try {
    res = await fetch(`${target.url}${path}`, {
      method: request.method,
      headers: {
        authorization: `Bearer ${target.token}`,
        accept: request.headers.accept ?? 'application/json',
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body,
      signal: ctl.signal,
      redirect: 'manual',
    });
  } catch (err) {
    const timedOut = (ctl.signal.reason as Error | undefined)?.message === 'headers timeout';
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const message = timedOut
      ? `cluster '${target.name}' (${target.url}) did not answer within ${headersMs / 1000} s`
      : `cluster '${target.name}' (${target.url}) could not be reached: ${cause?.code ?? cause?.message ?? (err as Error).message}`;
    dir.noteAnswered(id, message);
    throw new RouterError(timedOut ? 504 : 502, timedOut ? 'cluster_timeout' : 'cluster_unreachable', message);
  } finally {
    clearTimeout(headersTimer);
  }
  dir.noteAnswered(id, null);
  // The remote refusing its stored token is this profile's problem, not the console token's: never a 401 here.
  if (res.status === 401) {
    await res.body?.cancel();
    throw new RouterError(
      502,
      'cluster_token_refused',
      `cluster '${target.name}' refused the token stored for it (HTTP 401): update the cluster's token`,
    );
  }
  reply.status(res.status);
  for (const h of PASSED_HEADERS) {
    const v = res.headers.get(h);
    if (v !== null) reply.header(h, v);
  }
  if (!res.body) return reply.send();
  return reply.send(
    Readable.fromWeb(res.body as import('node:stream/web').ReadableStream).pipe(
      idleCutoff(ctl, target.name, 2 * headersMs),
    ),
  );
}

/** Ends a relayed answer whose remote sends nothing for `idleMs` (a stalled export). */
function idleCutoff(ctl: AbortController, name: string, idleMs: number): Transform {
  let timer: NodeJS.Timeout;
  const arm = (t: Transform) => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      ctl.abort(new Error('idle'));
      t.destroy(new Error(`cluster '${name}' stopped sending its answer for ${idleMs / 1000} s`));
    }, idleMs);
    timer.unref();
  };
  const t: Transform = new Transform({
    transform(chunk, _enc, cb) {
      arm(t);
      cb(null, chunk);
    },
    flush(cb) {
      clearTimeout(timer);
      cb();
    },
    destroy(err, cb) {
      clearTimeout(timer);
      cb(err);
    },
  });
  arm(t);
  return t;
}
