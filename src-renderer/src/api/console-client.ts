import { consoleErrorSchema, consoleModelListSchema, type ConsoleModelList } from '../../../src-router/contract';

/** The console API as the renderer sees it. Expected failures are values, not exceptions. */

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

export type ApiFailureKind = 'no-token' | 'rejected' | 'unreachable' | 'http' | 'invalid';

export interface ApiFailure {
  kind: ApiFailureKind;
  /** HTTP status when the node answered, else null. */
  status: number | null;
  message: string;
}

export type ApiResult<T> = { ok: true; value: T } | { ok: false; failure: ApiFailure };

export interface ConsoleClient {
  listModels(): Promise<ApiResult<ConsoleModelList>>;
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
    const parsed = consoleErrorSchema.safeParse(await res.json());
    if (parsed.success) return `${parsed.data.error.message} (HTTP ${res.status})`;
  } catch {
    // not JSON: fall through to the status line
  }
  return `node answered HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`;
}

export function createConsoleClient({ url, token, fetch, timeoutMs = 10_000 }: ConsoleClientOptions): ConsoleClient {
  const base = url.replace(/\/+$/, '');

  async function get<T>(path: string, parse: (body: unknown) => ApiResult<T>): Promise<ApiResult<T>> {
    if (!token) return failure('no-token', null, NO_TOKEN_MESSAGE);
    let res: Response;
    try {
      res = await fetch(`${base}${path}`, {
        headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' },
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      return failure('unreachable', null, `node unreachable: ${(err as Error).message}`);
    }
    if (res.status === 401 || res.status === 403) return failure('rejected', res.status, REJECTED_MESSAGE);
    if (!res.ok) return failure('http', res.status, await errorMessage(res));
    let body: unknown;
    try {
      body = await res.json();
    } catch {
      return failure('invalid', res.status, 'unexpected response from node: body is not JSON');
    }
    return parse(body);
  }

  return {
    listModels: () =>
      get('/router/v1/console/models', (body) => {
        const parsed = consoleModelListSchema.safeParse(body);
        if (parsed.success) return { ok: true, value: parsed.data };
        const first = parsed.error.issues[0];
        const where = first?.path.length ? first.path.join('.') : '(root)';
        return failure('invalid', 200, `unexpected response from node: ${where}: ${first?.message ?? 'invalid'}`);
      }),
  };
}
