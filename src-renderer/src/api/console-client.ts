import { z } from 'zod';
import {
  apiErrorBodySchema,
  type BenchRunList,
  benchRunListSchema,
  type ClusterLanes,
  type ClusterList,
  type ClusterProfileCreate,
  type ClusterProfilePatch,
  type ClusterView,
  type ConsoleModelList,
  clusterLanesSchema,
  clusterListSchema,
  clusterModelSchema,
  clusterNodeViewSchema,
  clusterViewSchema,
  consoleModelListSchema,
  type DecisionPageWire,
  decisionPageSchema,
  type GuardianDelete,
  type GuardianPut,
  type GuardianSetting,
  type GuardiansView,
  guardianSettingSchema,
  guardiansViewSchema,
  type HealthAnswer,
  healthAnswerSchema,
  type LendingViewWire,
  type LinkCandidateList,
  type LinkCreateInput,
  type LinkEnd,
  type LinkLane,
  type LinkList,
  type LinkRecord,
  type LinkUpdate,
  lendingViewSchema,
  linkCandidateListSchema,
  linkListSchema,
  linkRecordSchema,
  MODEL_FILE_INSPECT_PATH,
  MODEL_FILES_PATH,
  type ModelFileInspection,
  type ModelFileList,
  modelFileInspectionSchema,
  modelFileListSchema,
  type RoutingViewWire,
  type RuntimeHealth,
  routingViewSchema,
  runtimeHealthSchema,
  type SetRoutingAnswer,
  type SetRoutingRequest,
  type SettingsAnswer,
  type SettingsView,
  setRoutingAnswerSchema,
  settingsAnswerSchema,
  settingsViewSchema,
  type TimelinePageWire,
  timelinePageSchema,
  type UpstreamsAnswer,
  upstreamsAnswerSchema,
} from '../../../src-router/contract';
import { type ReplayRequestWire, type ReplayResultWire, replayResultSchema } from '../../../src-router/contract/replay';
import { clusterPath } from './cluster-path';
import {
  ENGINES_PATH,
  type EngineList,
  engineListSchema,
  MODEL_CONFIGS_PATH,
  type ModelConfigList,
  type ModelConfigRemoved,
  type ModelConfigWritten,
  modelConfigListSchema,
  modelConfigRemovedSchema,
  modelConfigWrittenSchema,
} from './model-config-wire';

/** The console API as the renderer sees it. Expected failures are values, not exceptions. */

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

/** `refused`: the node understood a write and said no (403 from a gate); the token itself is fine. */
export type ApiFailureKind = 'no-token' | 'rejected' | 'refused' | 'unreachable' | 'http' | 'invalid';

export interface ApiFailure {
  kind: ApiFailureKind;
  /** HTTP status when the node answered, else null. */
  status: number | null;
  message: string;
  /** The request field the node blamed (a 400's `param`), when it named one. */
  param?: string | null;
  /** The node's error code (`acknowledgement_required`, `not_an_operator`, …), when a write failed and it gave one. */
  code?: string | null;
}

export type ApiResult<T> = { ok: true; value: T } | { ok: false; failure: ApiFailure };

/** A file the node sent as a download (the decision-log export, UI-6). */
export interface DownloadedFile {
  blob: Blob;
  fileName: string;
}

export type ExportFormat = 'csv' | 'jsonl';

export const clusterNodeListSchema = z.object({ nodes: z.array(clusterNodeViewSchema) }).strict();
export const clusterModelListSchema = z.object({ models: z.array(clusterModelSchema) }).strict();
export type ClusterNodeList = z.infer<typeof clusterNodeListSchema>;
export type ClusterModelList = z.infer<typeof clusterModelListSchema>;

/** The site API's path of each lane's links (LINK-2). */
export const LINK_PATHS: Record<LinkLane, string> = {
  image: '/router/v1/site/routing-groups',
  text: '/router/v1/site/text-routing-groups',
};

/** Rows per page of the decision log. */
export const DECISION_PAGE_SIZE = 200;

export interface ConsoleClient {
  listModels(): Promise<ApiResult<ConsoleModelList>>;
  /** `runtime.health` (RT-1): the runtime blob of this node, or of `node` in the cluster. */
  runtimeHealth(node?: string): Promise<ApiResult<RuntimeHealth>>;
  /** `runtime.routing` (ROUTE-1, 6, 8). */
  runtimeRouting(): Promise<ApiResult<RoutingViewWire>>;
  /** `runtime.upstreams` (ROUTE-9). */
  runtimeUpstreams(): Promise<ApiResult<UpstreamsAnswer>>;
  /** `runtime.setRouting` (ROUTE-3, 5): a 400 is `http` with the node's exact message and `param`; a gate's 403 is `refused`. */
  setRouting(input: SetRoutingRequest): Promise<ApiResult<SetRoutingAnswer>>;
  /** Every node of the cluster as the master sees it (UI-2). */
  clusterNodes(): Promise<ApiResult<ClusterNodeList>>;
  /** The merged cluster catalog (ID-2): where link anchors are chosen from (UI-3). */
  clusterModels(): Promise<ApiResult<ClusterModelList>>;
  /** The lane state of every node of the cluster (the Models screen's replicas). */
  clusterLanes(): Promise<ApiResult<ClusterLanes>>;
  /** Connection profiles (UI-5): the local cluster first, then every remote one with its reachability. */
  clusters(): Promise<ApiResult<ClusterList>>;
  /** Adds a profile; the node tests it first: a 400 is `http` with the node's message and the field it blamed (`param`). */
  addCluster(input: ClusterProfileCreate): Promise<ApiResult<ClusterView>>;
  /** Changes a profile; a new URL or token is tested again (a new URL needs the token with it). */
  updateCluster(id: string, patch: ClusterProfilePatch): Promise<ApiResult<ClusterView>>;
  removeCluster(id: string): Promise<ApiResult<null>>;
  /** Live leases, settings, node builds and settings sync, held requests (UI-1, UI-2). */
  lending(): Promise<ApiResult<LendingViewWire>>;
  /** One page of the gathered decision log (UI-1): `query` holds the filters (see lending/decision-filters.ts); its own `limit` or DECISION_PAGE_SIZE rows. */
  decisions(query: string, cursor?: string | null): Promise<ApiResult<DecisionPageWire>>;
  /** The lease timeline's request and load analytics of every node for [from, to] (unix ms), the newest `limit` rows of each table per node. */
  timeline(from: number, to: number, limit: number): Promise<ApiResult<TimelinePageWire>>;
  /** What-if replay: a range's recorded arrivals replayed with changed settings or links; a 400 is `http` with the field (`param`). */
  replay(body: ReplayRequestWire): Promise<ApiResult<ReplayResultWire>>;
  /** The filtered log as a file (UI-6). */
  exportDecisions(format: ExportFormat, query: string): Promise<ApiResult<DownloadedFile>>;
  /** The links of a lane (LINK-2). */
  links(lane: LinkLane): Promise<ApiResult<LinkList>>;
  /** The picker for an anchor (UI-3): every candidate, ineligible ones disabled with the reason. */
  linkCandidates(lane: LinkLane, anchor: LinkEnd): Promise<ApiResult<LinkCandidateList>>;
  /** Creates a link; the first link to a different-weights helper is a 409 `acknowledgement_required` (LINK-3). */
  createLink(lane: LinkLane, input: LinkCreateInput): Promise<ApiResult<LinkRecord>>;
  /** Sets a link's flags (LINK-4). */
  updateLink(lane: LinkLane, id: string, patch: LinkUpdate): Promise<ApiResult<LinkRecord>>;
  deleteLink(lane: LinkLane, id: string): Promise<ApiResult<null>>;
  /** Guardian settings, the effective guardian of every text-only model, candidates (UI-4, GUARD-1). */
  guardians(): Promise<ApiResult<GuardiansView>>;
  /** Creates or replaces one setting; a 400 is `http` with the node's message and the field it named (`param`). */
  putGuardian(body: GuardianPut): Promise<ApiResult<GuardianSetting>>;
  /** Removes one setting (scope keys in the body). */
  deleteGuardian(body: GuardianDelete): Promise<ApiResult<null>>;
  /** The node's own config (operators only: a 403 is `refused` with code `not_an_operator`). */
  settings(): Promise<ApiResult<SettingsView>>;
  /** Writes the whole config; a 400 is `http` with the field path it named (`param`: `config.server.port`). */
  putSettings(config: Record<string, unknown>): Promise<ApiResult<SettingsAnswer>>;
  /** `GET /health` of the node (its `started_at` tells a restarted node from the one before). */
  health(): Promise<ApiResult<HealthAnswer>>;
  /** Benchmark runs kept in the node's store (ASSET-1), newest first. */
  benchRuns(): Promise<ApiResult<BenchRunList>>;
  /** The node's models folder: each config file with its config or its error. */
  modelConfigs(): Promise<ApiResult<ModelConfigList>>;
  /** Writes a new model config; a 400 is `http` with the field path (`param`: `config.contextsize`), a 409 names the taken file. */
  createModelConfig(config: Record<string, unknown>): Promise<ApiResult<ModelConfigWritten>>;
  /** Replaces the config of `name` (its file name without extension). */
  replaceModelConfig(name: string, config: Record<string, unknown>): Promise<ApiResult<ModelConfigWritten>>;
  /** Answers once the model's running requests ended and its engine stopped. */
  deleteModelConfig(name: string): Promise<ApiResult<ModelConfigRemoved>>;
  /** Engine discovery: which engine binaries the node can run, or why not and how to get them. */
  engines(): Promise<ApiResult<EngineList>>;
  /** One folder inside the folders the node may read (operators only); no `dir`: those folders. */
  modelFiles(dir?: string): Promise<ApiResult<ModelFileList>>;
  /** What a GGUF file's header says (operators only); a 400/403 names `param` `path`. */
  inspectModelFile(path: string): Promise<ApiResult<ModelFileInspection>>;
}

/** The node's own settings. */
export const SETTINGS_PATH = '/router/v1/console/settings';

/** The site API of guardian settings (GUARD-1). */
export const GUARDIANS_PATH = '/router/v1/site/guardians';

export interface ConsoleClientOptions {
  /** Base URL of the node, e.g. `http://127.0.0.1:8080` (no trailing slash needed). */
  url: string;
  token: string;
  fetch: FetchLike;
  timeoutMs?: number;
  /** A what-if replay's own bound (REPLAY_TIMEOUT_MS): replaying an hour of a busy store takes longer than a read. */
  replayTimeoutMs?: number;
  /**
   * The cluster every call is for (UI-5): absent or `local` for the node itself; a profile's id goes through the
   * local node's cluster proxy (api/cluster-path.ts). The calls and their parsing are the same either way.
   */
  cluster?: string | null;
}

export const REJECTED_MESSAGE =
  "console token rejected: the node no longer takes this page's token (for a new link, run routerdesk console-link on the node's machine)";
/** How long the console waits for a what-if replay (the other calls: `timeoutMs`, 10 s). */
export const REPLAY_TIMEOUT_MS = 60_000;
export const NO_TOKEN_MESSAGE =
  "no console token: this page was opened without one, or with a link already used (for a new link, run routerdesk console-link on the node's machine)";

const failure = (kind: ApiFailureKind, status: number | null, message: string): { ok: false; failure: ApiFailure } => ({
  ok: false,
  failure: { kind, status, message },
});

async function errorMessage(res: Response): Promise<string> {
  try {
    // Loose on purpose: the node's error objects also carry `type` and `param` (http/errors.ts errorPayload).
    const parsed = apiErrorBodySchema.safeParse(await res.json());
    if (parsed.success) return `${parsed.data.error.message} (HTTP ${res.status})`;
  } catch {
    // not JSON: fall through to the status line
  }
  return `node answered HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`;
}

/** A write's refusal or rejection as the node worded it, with the field it named (`param`) and its `code`. */
async function writeFailure(res: Response): Promise<{ ok: false; failure: ApiFailure }> {
  let body: unknown = null;
  try {
    body = await res.json();
  } catch {
    // not JSON: the status line below
  }
  const parsed = apiErrorBodySchema.safeParse(body);
  const message = parsed.success
    ? parsed.data.error.message
    : `node answered HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`;
  const kind: ApiFailureKind = res.status === 403 ? 'refused' : 'http';
  return {
    ok: false,
    failure: {
      kind,
      status: res.status,
      message,
      param: parsed.success ? (parsed.data.error.param ?? null) : null,
      code: parsed.success ? (parsed.data.error.code ?? null) : null,
    },
  };
}

/** Parses a 200 body with a contract schema; a mismatch names the first field that differs. */
const parseWith =
  <S extends z.ZodType>(schema: S) =>
  (body: unknown): ApiResult<z.output<S>> => {
    const parsed = schema.safeParse(body);
    if (parsed.success) return { ok: true, value: parsed.data };
    const first = parsed.error.issues[0];
    const where = first?.path.length ? first.path.join('.') : '(root)';
    return failure('invalid', 200, `unexpected response from node: ${where}: ${first?.message ?? 'invalid'}`);
  };

const noBody = (): ApiResult<null> => ({ ok: true, value: null });

/** The file name of a `Content-Disposition: attachment; filename="…"` header, else `fallback`. */
export function fileNameFromDisposition(header: string | null, fallback: string): string {
  const m = header ? /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(header) : null;
  const name = m ? decodeURIComponent(m[1]).trim() : '';
  return name && !/[\\/]/.test(name) ? name : fallback;
}

type Write = { method: 'POST' | 'PUT' | 'PATCH' | 'DELETE'; body?: unknown };

const withQuery = (path: string, query: string) => (query ? `${path}?${query}` : path);

/**
 * The proxy's own answer for a remote it could not ask (502/504, `cluster_*` codes: unreachable, timed out, its
 * stored token refused): the message names the cluster. Null for any other answer.
 */
async function proxyFailure(res: Response): Promise<{ ok: false; failure: ApiFailure } | null> {
  if (res.status !== 502 && res.status !== 504) return null;
  let body: unknown = null;
  try {
    body = await res.clone().json();
  } catch {
    return null;
  }
  const parsed = apiErrorBodySchema.safeParse(body);
  const code = parsed.success ? (parsed.data.error.code ?? '') : '';
  if (!parsed.success || !code.startsWith('cluster_')) return null;
  return { ok: false, failure: { kind: 'unreachable', status: res.status, message: parsed.data.error.message, code } };
}

/** A call that ran out of its time: said as such (with what it was and its bound), not as an unreachable node. */
const isTimeout = (err: unknown) => err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
const seconds = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`);

export function createConsoleClient({
  url,
  token,
  fetch,
  timeoutMs = 10_000,
  replayTimeoutMs = REPLAY_TIMEOUT_MS,
  cluster = null,
}: ConsoleClientOptions): ConsoleClient {
  const base = url.replace(/\/+$/, '');

  /** `timedOut`: the message when the call runs out of `ms` (else the generic "node unreachable"). */
  async function send(
    path: string,
    init: { method: string; body?: unknown; accept: string; timedOut?: string },
    ms: number,
  ): Promise<Response | { ok: false; failure: ApiFailure }> {
    if (!token) return failure('no-token', null, NO_TOKEN_MESSAGE);
    try {
      return await fetch(`${base}${clusterPath(cluster, path)}`, {
        method: init.method,
        headers: {
          Authorization: `Bearer ${token}`,
          Accept: init.accept,
          ...(init.body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
        signal: AbortSignal.timeout(ms),
      });
    } catch (err) {
      if (init.timedOut && isTimeout(err)) return failure('unreachable', null, init.timedOut);
      return failure('unreachable', null, `node unreachable: ${(err as Error).message}`);
    }
  }

  /**
   * `gated`: a read behind a gate (operators only), whose 403 is a refusal as a write's is. `bound`: a call's own time
   * limit and the message when it runs out (else `timeoutMs`).
   */
  async function request<T>(
    path: string,
    parse: (body: unknown) => ApiResult<T>,
    write?: Write,
    gated = false,
    bound?: { ms: number; timedOut: string },
  ): Promise<ApiResult<T>> {
    const res = await send(
      path,
      { method: write?.method ?? 'GET', body: write?.body, accept: 'application/json', timedOut: bound?.timedOut },
      bound?.ms ?? timeoutMs,
    );
    if ('failure' in res) return res;
    const proxied = await proxyFailure(res);
    if (proxied) return proxied;
    // A write's 403 is a gate (ROUTE-8, operators), not a bad token: the token is rejected only with 401 there.
    const gate = write !== undefined || gated;
    if (res.status === 401 || (res.status === 403 && !gate)) return failure('rejected', res.status, REJECTED_MESSAGE);
    if (!res.ok) return gate ? writeFailure(res) : failure('http', res.status, await errorMessage(res));
    if (res.status === 204) return parse(null);
    let body: unknown;
    try {
      body = await res.json();
    } catch {
      return failure('invalid', res.status, 'unexpected response from node: body is not JSON');
    }
    return parse(body);
  }

  async function download(path: string, fallbackName: string): Promise<ApiResult<DownloadedFile>> {
    const res = await send(path, { method: 'GET', accept: '*/*' }, Math.max(timeoutMs, 60_000));
    if ('failure' in res) return res;
    const proxied = await proxyFailure(res);
    if (proxied) return proxied;
    if (res.status === 401 || res.status === 403) return failure('rejected', res.status, REJECTED_MESSAGE);
    if (!res.ok) return failure('http', res.status, await errorMessage(res));
    try {
      return {
        ok: true,
        value: {
          blob: await res.blob(),
          fileName: fileNameFromDisposition(res.headers.get('content-disposition'), fallbackName),
        },
      };
    } catch (err) {
      return failure('unreachable', res.status, `download interrupted: ${(err as Error).message}`);
    }
  }

  const get = <T>(path: string, parse: (body: unknown) => ApiResult<T>) => request(path, parse);
  const linkPath = (lane: LinkLane, id?: string) =>
    `${LINK_PATHS[lane]}${id === undefined ? '' : `/${encodeURIComponent(id)}`}`;

  return {
    listModels: () => get('/router/v1/console/models', parseWith(consoleModelListSchema)),
    runtimeHealth: (node) =>
      get(
        `/router/v1/console/runtime.health${node ? `?node=${encodeURIComponent(node)}` : ''}`,
        parseWith(runtimeHealthSchema),
      ),
    runtimeRouting: () => get('/router/v1/console/runtime.routing', parseWith(routingViewSchema)),
    runtimeUpstreams: () => get('/router/v1/console/runtime.upstreams', parseWith(upstreamsAnswerSchema)),
    setRouting: (input) => {
      // ROUTE-5: routesEngine is on the wire only when the operator picked a profile.
      const body: SetRoutingRequest =
        input.routesEngine === undefined
          ? { strategy: input.strategy }
          : { strategy: input.strategy, routesEngine: input.routesEngine };
      return request('/router/v1/console/runtime.setRouting', parseWith(setRoutingAnswerSchema), {
        method: 'POST',
        body,
      });
    },
    clusterNodes: () => get('/router/v1/console/cluster/nodes', parseWith(clusterNodeListSchema)),
    clusterModels: () => get('/router/v1/console/cluster/models', parseWith(clusterModelListSchema)),
    clusterLanes: () => get('/router/v1/console/cluster/lanes', parseWith(clusterLanesSchema)),
    clusters: () => get('/router/v1/console/clusters', parseWith(clusterListSchema)),
    addCluster: (input) =>
      request('/router/v1/console/clusters', parseWith(clusterViewSchema), { method: 'POST', body: input }),
    updateCluster: (id, patch) =>
      request(`/router/v1/console/clusters/${encodeURIComponent(id)}`, parseWith(clusterViewSchema), {
        method: 'PATCH',
        body: patch,
      }),
    removeCluster: (id) =>
      request(`/router/v1/console/clusters/${encodeURIComponent(id)}`, noBody, { method: 'DELETE' }),
    lending: () => get('/router/v1/console/lending', parseWith(lendingViewSchema)),
    decisions: (query, cursor) => {
      const q = new URLSearchParams(query);
      if (!q.has('limit')) q.set('limit', String(DECISION_PAGE_SIZE));
      if (cursor) q.set('cursor', cursor);
      return get(`/router/v1/console/decisions?${q}`, parseWith(decisionPageSchema));
    },
    timeline: (from, to, limit) =>
      get(
        `/router/v1/console/timeline?${new URLSearchParams({ from: String(Math.floor(from)), to: String(Math.ceil(to)), limit: String(limit) })}`,
        parseWith(timelinePageSchema),
      ),
    replay: (body) =>
      request('/router/v1/console/replay', parseWith(replayResultSchema), { method: 'POST', body }, false, {
        ms: replayTimeoutMs,
        timedOut: `the replay did not finish within ${seconds(replayTimeoutMs)} (the console stopped waiting): replay a shorter range`,
      }),
    exportDecisions: (format, query) => {
      const q = new URLSearchParams(query);
      q.delete('limit');
      q.delete('cursor');
      q.set('format', format);
      return download(withQuery('/router/v1/console/decisions/export', q.toString()), `offload-decisions.${format}`);
    },
    links: (lane) => get(linkPath(lane), parseWith(linkListSchema)),
    linkCandidates: (lane, anchor) =>
      get(
        `${linkPath(lane)}/candidates?${new URLSearchParams({ node: anchor.node_id, model: anchor.model, role: 'owner' })}`,
        parseWith(linkCandidateListSchema),
      ),
    createLink: (lane, input) => request(linkPath(lane), parseWith(linkRecordSchema), { method: 'POST', body: input }),
    updateLink: (lane, id, patch) =>
      request(linkPath(lane, id), parseWith(linkRecordSchema), { method: 'PUT', body: patch }),
    deleteLink: (lane, id) => request(linkPath(lane, id), noBody, { method: 'DELETE' }),
    guardians: () => get(GUARDIANS_PATH, parseWith(guardiansViewSchema)),
    putGuardian: (body) => request(GUARDIANS_PATH, parseWith(guardianSettingSchema), { method: 'PUT', body }),
    deleteGuardian: (body) => request(GUARDIANS_PATH, noBody, { method: 'DELETE', body }),
    settings: () => request(SETTINGS_PATH, parseWith(settingsViewSchema), undefined, true),
    putSettings: (config) =>
      request(SETTINGS_PATH, parseWith(settingsAnswerSchema), { method: 'PUT', body: { config } }),
    health: () => get('/health', parseWith(healthAnswerSchema)),
    benchRuns: () => get('/router/v1/console/bench/runs', parseWith(benchRunListSchema)),
    modelConfigs: () => request(MODEL_CONFIGS_PATH, parseWith(modelConfigListSchema), undefined, true),
    createModelConfig: (config) =>
      request(MODEL_CONFIGS_PATH, parseWith(modelConfigWrittenSchema), { method: 'POST', body: { config } }),
    replaceModelConfig: (name, config) =>
      request(`${MODEL_CONFIGS_PATH}/${encodeURIComponent(name)}`, parseWith(modelConfigWrittenSchema), {
        method: 'PUT',
        body: { config },
      }),
    deleteModelConfig: (name) =>
      request(
        `${MODEL_CONFIGS_PATH}/${encodeURIComponent(name)}`,
        parseWith(modelConfigRemovedSchema),
        { method: 'DELETE' },
        false,
        {
          ms: 5 * 60_000,
          timedOut:
            "the node did not confirm the removal within 5 min (it waits for the model's running requests): read the models again",
        },
      ),
    engines: () => request(ENGINES_PATH, parseWith(engineListSchema), undefined, true),
    modelFiles: (dir) =>
      request(
        dir ? `${MODEL_FILES_PATH}?${new URLSearchParams({ dir })}` : MODEL_FILES_PATH,
        parseWith(modelFileListSchema),
        undefined,
        true,
      ),
    inspectModelFile: (path) =>
      request(MODEL_FILE_INSPECT_PATH, parseWith(modelFileInspectionSchema), { method: 'POST', body: { path } }),
  };
}
