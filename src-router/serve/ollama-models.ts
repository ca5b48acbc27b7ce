/**
 * The Ollama API's hold on models: which local configs a name means, `keep_alive` (how long a model stays loaded
 * while idle), Ollama's load / unload calls (a chat with no messages, a generate with no prompt), and how long a
 * request waited for a load.
 */
import type { Supervisor } from '../backends';
import { AnswerTooLarge, errorText, fetchAnswer, VIEW_LIMIT } from '../backends/answer-limits';
import { NODE_LOAD_PATH } from '../cluster/assets/recipe-cluster';
import { nodeLoadResponseSchema, peerRead } from '../contract';
import type { ClusterCatalog, LocalModelRecord, ModelRegistry } from '../registry';
import { RouterError, tooLarge } from './errors';
import type { TargetResolver } from './target-resolver';

export interface OllamaModelsDeps {
  catalog: ClusterCatalog;
  registry: ModelRegistry;
  supervisor: Supervisor;
  resolver: TargetResolver;
  /** Cluster token, for a load on another node's node API. */
  clusterToken: string;
  loadTimeoutMs: number;
}

export class OllamaModels {
  constructor(private readonly deps: OllamaModelsDeps) {}

  /** The configs on this node that a client's model name means (its catalog entry's local replicas, else a local ID). */
  localConfigs(name: string): LocalModelRecord[] {
    const entry = this.deps.catalog.get(name);
    const recs = entry
      ? entry.replicas.filter((r) => r.local).map((r) => this.deps.registry.byLocalId(r.record.localId))
      : this.deps.registry.resolve(name);
    return recs.filter((r): r is LocalModelRecord => r !== undefined);
  }

  /**
   * A request's keep_alive for the model it names: how long its engine stays loaded once idle (null: always; undefined:
   * the config's ttl). Applies from the engine's next idle moment, so the request itself is never cut short.
   */
  keepAlive(name: string, ms: number | null | undefined): void {
    for (const rec of this.localConfigs(name)) this.deps.supervisor.setIdleUnload(rec.localId, ms);
  }

  /**
   * Milliseconds of the window [startedAt, now] (epoch ms) this request spent waiting for a load of the model it named:
   * a load of one of its local configs that ended inside the window, counted from the window's start at most.
   */
  loadWaitMs(name: string, startedAt: number, now = Date.now()): number {
    let ms = 0;
    for (const rec of this.localConfigs(name)) {
      const load = this.deps.supervisor.lastLoad(rec.localId);
      if (load && load.at >= startedAt && load.at <= now)
        ms = Math.max(ms, Math.min(load.durationMs, load.at - startedAt));
    }
    return ms;
  }

  /**
   * Ollama's load call: resolves the model like a request would (404, capability 400), then loads it and sets its
   * keep_alive; with keep_alive 0 it unloads the model instead, as soon as nothing runs in it. Remote models are
   * loaded through their node's API; only this node's engines can be unloaded.
   */
  async loadCall(
    endpoint: 'chat' | 'completion',
    name: string,
    keepAliveMs: number | null | undefined,
    body: Record<string, unknown>,
  ): Promise<'load' | 'unload'> {
    const target = await this.deps.resolver.resolve({ endpoint, model: name, body });
    const unload = keepAliveMs === 0;
    if (target.kind === 'local') {
      if (unload) {
        // Nothing to unload when it is neither loaded nor loading: its next load keeps its config's ttl.
        const state = this.deps.supervisor.modelLoad(target.localId);
        if (state.loaded || state.loading) this.deps.supervisor.setIdleUnload(target.localId, 0, { now: true });
        return 'unload';
      }
      this.deps.supervisor.setIdleUnload(target.localId, keepAliveMs);
      await this.deps.supervisor.preload(target.localId);
      return 'load';
    }
    if (target.kind === 'static') return unload ? 'unload' : 'load';
    if (unload)
      throw new RouterError(
        400,
        'invalid_request',
        `model '${name}' runs on node '${target.nodeId}': unload it there`,
        'invalid_request_error',
        'keep_alive',
      );
    await this.loadRemote(target.url!, target.localId);
    return 'load';
  }

  private async loadRemote(url: string, localId: string): Promise<void> {
    const res = await fetch(new URL(NODE_LOAD_PATH, url), {
      method: 'POST',
      headers: { authorization: `Bearer ${this.deps.clusterToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ localId }),
      signal: AbortSignal.timeout(this.deps.loadTimeoutMs),
    }).catch((err: Error) => {
      throw new RouterError(502, 'node_unreachable', `loading '${localId}' at ${url}: ${err.message}`);
    });
    const answer = fetchAnswer(res);
    if (!res.ok)
      throw new RouterError(
        res.status >= 500 ? 502 : res.status,
        'load_failed',
        `loading '${localId}' at ${url} answered ${res.status}: ${(await errorText(answer)).slice(0, 500)}`,
      );
    const text = await answer.text(VIEW_LIMIT).catch((err: Error) => {
      throw err instanceof AnswerTooLarge
        ? tooLarge(err, `node at ${url}, loading '${localId}',`)
        : new RouterError(502, 'node_unreachable', `loading '${localId}' at ${url}: ${err.message}`);
    });
    peerRead(nodeLoadResponseSchema).parse(JSON.parse(text));
  }
}
