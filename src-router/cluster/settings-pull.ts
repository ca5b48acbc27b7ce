import type { FastifyBaseLogger } from 'fastify';
import { type MasterSettings, masterSettingsSchema, peerRead } from '../contract';
import { callPeer } from '../lending/master-client';
import { normalizeUrl } from './node-client';

export interface SettingsPullOptions {
  /** The slave's configured `cluster.master_url`: the one place it takes links and guardian settings from. */
  masterUrl: string;
  token: string;
  nodeId: string;
  /** Pulled this often too, so a lost push is repaired (`cluster.sync_interval`). */
  intervalMs: number;
  timeoutMs?: number;
  log: FastifyBaseLogger;
  /** Applies what the master answered (each kind decides whether it changed). */
  apply(settings: MasterSettings): void;
}

/**
 * A slave's reading of its master's links and guardian settings (LEASE-1, GUARD-1): at start, every interval and on
 * each push, which is only a nudge. One read runs at a time and at most one more waits; every nudge in between
 * shares that one, so a flood of pushes costs the master at most two reads at once.
 */
export class SettingsPuller {
  private timer?: NodeJS.Timeout;
  private running?: Promise<MasterSettings>;
  private waiting?: Promise<MasterSettings>;
  private lastError: string | null = null;

  constructor(private readonly opts: SettingsPullOptions) {}

  start(): void {
    void this.pull().catch(() => {});
    this.timer = setInterval(() => void this.pull().catch(() => {}), this.opts.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** The master's settings, applied; read anew unless a read that started after this call is already due. */
  pull(): Promise<MasterSettings> {
    if (!this.running) {
      this.running = this.readAndApply().finally(() => (this.running = undefined));
      return this.running;
    }
    this.waiting ??= this.running
      .catch(() => undefined)
      .then(() => {
        this.waiting = undefined;
        return this.pull();
      });
    return this.waiting;
  }

  private async readAndApply(): Promise<MasterSettings> {
    const url = `${normalizeUrl(this.opts.masterUrl)}/router/v1/node/master-settings?node=${encodeURIComponent(this.opts.nodeId)}`;
    try {
      const { res, json } = await callPeer(url, this.opts.token, undefined, this.opts.timeoutMs ?? 5_000);
      if (!res.ok) throw new Error(`the master answered HTTP ${res.status}`);
      const parsed = peerRead(masterSettingsSchema).safeParse(json);
      if (!parsed.success)
        throw new Error(
          `the master's settings are unreadable: ${parsed.error.issues[0]?.path.join('.') || '(root)'}: ${parsed.error.issues[0]?.message}`,
        );
      this.opts.apply(parsed.data);
      if (this.lastError) this.opts.log.info(`settings read from the master ${this.opts.masterUrl} again`);
      this.lastError = null;
      return parsed.data;
    } catch (err) {
      const message = (err as Error).message;
      // Logged once per distinct error: an unreachable master does not flood the log every interval.
      if (message !== this.lastError)
        this.opts.log.warn(
          `reading links and guardian settings from the master ${this.opts.masterUrl} failed: ${message}`,
        );
      this.lastError = message;
      throw err;
    }
  }
}
