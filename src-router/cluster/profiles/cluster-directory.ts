/**
 * The remote clusters the local node knows (UI-5): profiles with their reachability, role and version as last seen.
 * A profile is kept only after the remote answered once with its token; a new URL or token is tested again, and a
 * new URL only with a token given with it.
 */
import { z } from 'zod';
import { AnswerTooLarge, fetchAnswer, sizeText, VIEW_LIMIT } from '../../backends/answer-limits';
import { type ClusterProfileCreate, type ClusterProfilePatch, type ClusterView, RouterError } from '../../contract';
import type { ProfileStore, StoredProfile } from './profile-store';

/** What the remote said about itself: the node that answers the URL. Loose: a newer remote may say more. */
const remoteNodesSchema = z.looseObject({
  nodes: z.array(
    z.looseObject({
      nodeId: z.string(),
      role: z.enum(['standalone', 'master', 'slave']),
      local: z.boolean(),
      version: z.string().nullable(),
    }),
  ),
});

export type ProbeResult =
  | { ok: true; role: 'standalone' | 'master' | 'slave'; nodeId: string; version: string | null }
  | {
      ok: false;
      code: 'cluster_unreachable' | 'cluster_token_refused' | 'not_a_router';
      field: 'url' | 'token';
      message: string;
    };

/** Calls the remote once with the token: is it a router node, and does it take the token? */
export async function probeCluster(url: string, token: string, timeoutMs: number): Promise<ProbeResult> {
  let res: Response;
  try {
    res = await fetch(`${url}/router/v1/console/cluster/nodes`, {
      headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'manual',
    });
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } };
    const why =
      e.name === 'TimeoutError'
        ? `no answer within ${Math.round(timeoutMs / 1000)} s`
        : (e.cause?.code ?? e.cause?.message ?? e.message);
    return { ok: false, code: 'cluster_unreachable', field: 'url', message: `could not reach ${url}: ${why}` };
  }
  if (res.status === 401 || res.status === 403) {
    await res.body?.cancel();
    return {
      ok: false,
      code: 'cluster_token_refused',
      field: 'token',
      message: `the router at ${url} refused the token (HTTP ${res.status}): use a console token of that node`,
    };
  }
  const notRouter = (detail: string): ProbeResult => ({
    ok: false,
    code: 'not_a_router',
    field: 'url',
    message: `${url} is not a Routerdesk node (${detail})`,
  });
  if (!res.ok) {
    await res.body?.cancel();
    return notRouter(`it answered HTTP ${res.status} to its console API`);
  }
  let body: unknown;
  try {
    body = await fetchAnswer(res).json(VIEW_LIMIT);
  } catch (err) {
    return notRouter(
      err instanceof AnswerTooLarge ? `its answer is over ${sizeText(VIEW_LIMIT)}` : 'its answer is not JSON',
    );
  }
  const parsed = remoteNodesSchema.safeParse(body);
  const self = parsed.success ? parsed.data.nodes.find((n) => n.local) : undefined;
  if (!self) return notRouter('its answer is not a node list');
  return { ok: true, role: self.role, nodeId: self.nodeId, version: self.version };
}

interface Status {
  reachable: boolean;
  role: ClusterView['role'];
  nodeId: string | null;
  version: string | null;
  lastError: string | null;
  checkedAt: number;
}

export interface ClusterDirectoryOptions {
  /** How long a probe may take (the add dialog waits for it). */
  probeTimeoutMs?: number;
  /** A status younger than this is shown as is; an older one is probed again when the list is read. */
  freshMs?: number;
  /** The proxy: how long a remote may take to start answering (its next chunk: twice that). */
  remoteTimeoutMs?: number;
  now?(): number;
}

export class ClusterDirectory {
  private readonly status = new Map<string, Status>();
  private readonly probeTimeoutMs: number;
  private readonly freshMs: number;
  private readonly now: () => number;
  readonly remoteTimeoutMs: number;

  constructor(
    private readonly store: ProfileStore,
    opts: ClusterDirectoryOptions = {},
  ) {
    this.probeTimeoutMs = opts.probeTimeoutMs ?? 5_000;
    this.freshMs = opts.freshMs ?? 4_000;
    this.now = opts.now ?? Date.now;
    this.remoteTimeoutMs = opts.remoteTimeoutMs ?? 15_000;
  }

  /** Every profile with its status, each remote asked again (in parallel, bounded) when its status is stale. */
  async list(): Promise<ClusterView[]> {
    const profiles = this.store.list();
    await Promise.all(profiles.map((p) => (this.isFresh(p.id) ? undefined : this.refresh(p))));
    return profiles.map((p) => this.view(p));
  }

  async create(input: ClusterProfileCreate): Promise<ClusterView> {
    if (this.store.list().some((p) => p.name === input.name))
      throw new RouterError(
        409,
        'duplicate_cluster_name',
        `a cluster named '${input.name}' already exists`,
        'invalid_request_error',
        'name',
      );
    const probe = await this.probeOrRefuse(input.url, input.token);
    const p = this.store.create(input);
    this.record(p.id, probe);
    return this.view(p);
  }

  async update(id: string, patch: ClusterProfilePatch): Promise<ClusterView> {
    const current = this.profile(id);
    // The stored token was given for the stored URL only: it is never sent anywhere else.
    if (
      patch.url !== undefined &&
      new URL(patch.url).origin !== new URL(current.url).origin &&
      patch.token === undefined
    ) {
      throw new RouterError(
        400,
        'token_required',
        `a new URL needs the token again: the token stored for '${current.name}' was given for ${current.url} only and is never sent to another address`,
        'invalid_request_error',
        'token',
      );
    }
    let probe: ProbeResult | undefined;
    if (patch.url !== undefined || patch.token !== undefined)
      probe = await this.probeOrRefuse(patch.url ?? current.url, patch.token ?? this.store.token(id));
    const p = this.store.update(id, patch)!;
    if (probe) this.record(id, probe);
    return this.view(p);
  }

  delete(id: string): void {
    if (!this.store.delete(id)) throw notFound(id);
    this.status.delete(id);
  }

  /** Where to forward to and with which token (the proxy only). */
  target(id: string): { name: string; url: string; token: string } {
    const p = this.profile(id);
    return { name: p.name, url: p.url, token: this.store.token(id) };
  }

  /** The proxy saw the remote answer, or not: the switcher's dot follows without a probe of its own. */
  noteAnswered(id: string, error: string | null): void {
    const s = this.status.get(id);
    if (s) this.status.set(id, { ...s, reachable: error === null, lastError: error, checkedAt: this.now() });
  }

  private profile(id: string): StoredProfile {
    const p = this.store.get(id);
    if (!p) throw notFound(id);
    return p;
  }

  private async probeOrRefuse(url: string, token: string): Promise<Extract<ProbeResult, { ok: true }>> {
    const probe = await probeCluster(url, token, this.probeTimeoutMs);
    if (!probe.ok) throw new RouterError(400, probe.code, probe.message, 'invalid_request_error', probe.field);
    return probe;
  }

  private isFresh(id: string): boolean {
    const s = this.status.get(id);
    return !!s && this.now() - s.checkedAt < this.freshMs;
  }

  private async refresh(p: StoredProfile): Promise<void> {
    let probe: ProbeResult;
    try {
      probe = await probeCluster(p.url, this.store.token(p.id), Math.min(this.probeTimeoutMs, 2_000));
    } catch (err) {
      probe = { ok: false, code: 'cluster_token_refused', field: 'token', message: (err as Error).message };
    }
    this.record(p.id, probe);
  }

  private record(id: string, probe: ProbeResult): void {
    const before = this.status.get(id);
    this.status.set(
      id,
      probe.ok
        ? {
            reachable: true,
            role: probe.role,
            nodeId: probe.nodeId,
            version: probe.version,
            lastError: null,
            checkedAt: this.now(),
          }
        : {
            reachable: false,
            role: before?.role ?? null,
            nodeId: before?.nodeId ?? null,
            version: before?.version ?? null,
            lastError: probe.message,
            checkedAt: this.now(),
          },
    );
  }

  private view(p: StoredProfile): ClusterView {
    const s = this.status.get(p.id);
    return {
      id: p.id,
      name: p.name,
      local: false,
      url: p.url,
      reachable: s?.reachable ?? false,
      role: s?.role ?? null,
      nodeId: s?.nodeId ?? null,
      version: s?.version ?? null,
      lastError: s?.lastError ?? null,
      checkedAt: s ? new Date(s.checkedAt).toISOString() : null,
    };
  }
}

const notFound = (id: string) => new RouterError(404, 'cluster_not_found', `no cluster '${id}'`);
