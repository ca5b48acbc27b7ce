import type { FastifyBaseLogger } from 'fastify';
import type { NodeSnapshot } from '../contract';
import { normalizeUrl, type NodeClient } from './node-client';

/** A slave registers its snapshot with the master at start-up and on every sync interval (HEALTH-1). */
export class Registrar {
  private timer?: NodeJS.Timeout;
  private lastError: string | null = null;
  registered = false;

  constructor(
    private readonly opts: { masterUrl: string; syncIntervalMs: number; client: NodeClient; snapshot(): NodeSnapshot; log: FastifyBaseLogger },
  ) {}

  start(): void {
    void this.registerNow();
    this.timer = setInterval(() => void this.registerNow(), this.opts.syncIntervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  async registerNow(): Promise<boolean> {
    try {
      await this.opts.client.register(normalizeUrl(this.opts.masterUrl), this.opts.snapshot());
      if (!this.registered || this.lastError) this.opts.log.info(`registered with master ${this.opts.masterUrl}`);
      this.registered = true;
      this.lastError = null;
      return true;
    } catch (err) {
      const message = (err as Error).message;
      // Logged once per distinct error, so an unreachable master does not flood the log every interval.
      if (message !== this.lastError) this.opts.log.warn(`registration with master failed: ${message}`);
      this.lastError = message;
      this.registered = false;
      return false;
    }
  }
}
