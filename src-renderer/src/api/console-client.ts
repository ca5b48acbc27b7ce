import type { z } from 'zod';
import {
  apiErrorBodySchema, consoleModelListSchema, routingViewSchema, runtimeHealthSchema, setRoutingAnswerSchema, upstreamsAnswerSchema,
  type ConsoleModelList, type RoutingViewWire, type RuntimeHealth, type SetRoutingAnswer, type SetRoutingRequest, type UpstreamsAnswer,
} from '../../../src-router/contract';

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
}

export type ApiResult<T> = { ok: true; value: T } | { ok: false; failure: ApiFailure };

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
}

export interface ConsoleClientOptions {
  /** Base URL of the node, e.g. `http://127.0.0.1:8080` (no trailing slash needed). */
  url: string;
  token: string;
  fetch: FetchLike;
  timeoutMs?: number;
}

export const REJECTED_MESSAGE = 'console token rejected';
export const NO_TOKEN_MESSAGE = 'no console token: open the URL the node printed (…/?token=…)';

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

/** A write's refusal or rejection as the node worded it, with the field it named (`param`). */
async function writeFailure(res: Response): Promise<{ ok: false; failure: ApiFailure }> {
  let body: unknown = null;
  try {
    body = await res.json();
  } catch {
    // not JSON: the status line below
  }
  const parsed = apiErrorBodySchema.safeParse(body);
  const message = parsed.success ? parsed.data.error.message : `node answered HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`;
  const kind: ApiFailureKind = res.status === 403 ? 'refused' : 'http';
  return { ok: false, failure: { kind, status: res.status, message, param: parsed.success ? (parsed.data.error.param ?? null) : null } };
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

export function createConsoleClient({ url, token, fetch, timeoutMs = 10_000 }: ConsoleClientOptions): ConsoleClient {
  const base = url.replace(/\/+$/, '');

  async function request<T>(path: string, parse: (body: unknown) => ApiResult<T>, post?: unknown): Promise<ApiResult<T>> {
    if (!token) return failure('no-token', null, NO_TOKEN_MESSAGE);
    let res: Response;
    try {
      res = await fetch(`${base}${path}`, {
        method: post === undefined ? 'GET' : 'POST',
        headers: {
          Authorization: `Bearer ${token}`,
          Accept: 'application/json',
          ...(post === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        body: post === undefined ? undefined : JSON.stringify(post),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      return failure('unreachable', null, `node unreachable: ${(err as Error).message}`);
    }
    // A write's 403 is a gate (ROUTE-8), not a bad token: the token is rejected only with 401 there.
    if (res.status === 401 || (res.status === 403 && post === undefined)) return failure('rejected', res.status, REJECTED_MESSAGE);
    if (!res.ok) return post === undefined ? failure('http', res.status, await errorMessage(res)) : writeFailure(res);
    let body: unknown;
    try {
      body = await res.json();
    } catch {
      return failure('invalid', res.status, 'unexpected response from node: body is not JSON');
    }
    return parse(body);
  }

  const get = <T>(path: string, parse: (body: unknown) => ApiResult<T>) => request(path, parse);

  return {
    listModels: () => get('/router/v1/console/models', parseWith(consoleModelListSchema)),
    runtimeHealth: (node) =>
      get(`/router/v1/console/runtime.health${node ? `?node=${encodeURIComponent(node)}` : ''}`, parseWith(runtimeHealthSchema)),
    runtimeRouting: () => get('/router/v1/console/runtime.routing', parseWith(routingViewSchema)),
    runtimeUpstreams: () => get('/router/v1/console/runtime.upstreams', parseWith(upstreamsAnswerSchema)),
    setRouting: (input) => {
      // ROUTE-5: routesEngine is on the wire only when the operator picked a profile.
      const body: SetRoutingRequest = input.routesEngine === undefined ? { strategy: input.strategy } : { strategy: input.strategy, routesEngine: input.routesEngine };
      return request('/router/v1/console/runtime.setRouting', parseWith(setRoutingAnswerSchema), body);
    },
  };
}
