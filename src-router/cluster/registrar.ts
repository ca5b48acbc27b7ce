import type { FastifyBaseLogger } from 'fastify';
import type { NodeSnapshot } from '../contract';
import { type NodeClient, normalizeUrl } from './node-client';

/** A slave registers its snapshot with the master at start-up and on every sync interval (HEALTH-1). */
export class Registrar {
  private timer?: NodeJS.Timeout;
  private lastError: string | null = null;
  registered = false;
  /** The node_id of the master that accepted the last registration (link pushes must come from it). */
  masterId: string | null = null;

  constructor(
    private readonly opts: {
      masterUrl: string;
      syncIntervalMs: number;
      client: NodeClient;
      snapshot(): NodeSnapshot;
      log: FastifyBaseLogger;
      /** A registration failed after one had succeeded: the master is out of reach from here. */
      onMasterLost?(): void;
      /** A registration succeeded after a failure (or the first time). */
      onMasterBack?(): void;
    },
  ) {}

  start(): void {
    void this.registerNow();
    this.timer = setInterval(() => void this.registerNow(), this.opts.syncIntervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /**
   * The master's node_id: from the last registration, else asked of the master now (null when it does not answer).
   * Callers meanwhile share that one question: every push asks, and anyone with the cluster token can push.
   */
  master(): Promise<string | null> {
    if (this.masterId !== null) return Promise.resolve(this.masterId);
    this.lookup ??= this.askMaster().finally(() => (this.lookup = undefined));
    return this.lookup;
  }

  private lookup?: Promise<string | null>;

  private async askMaster(): Promise<string | null> {
    try {
      const nodeId = (await this.opts.client.snapshot(normalizeUrl(this.opts.masterUrl))).nodeId;
      this.masterId ??= nodeId;
    } catch {
      /* not reachable yet: unknown */
    }
    return this.masterId;
  }

  async registerNow(): Promise<boolean> {
    try {
      const answer = await this.opts.client.register(normalizeUrl(this.opts.masterUrl), this.opts.snapshot());
      this.masterId = answer.masterId;
      if (!this.registered || this.lastError) this.opts.log.info(`registered with master ${this.opts.masterUrl}`);
      if (!this.registered) this.opts.onMasterBack?.();
      this.registered = true;
      this.lastError = null;
      return true;
    } catch (err) {
      const message = (err as Error).message;
      // Logged once per distinct error, so an unreachable master does not flood the log every interval.
      if (message !== this.lastError) this.opts.log.warn(`registration with master failed: ${message}`);
      this.lastError = message;
      if (this.registered) this.opts.onMasterLost?.();
      this.registered = false;
      return false;
    }
  }
}
