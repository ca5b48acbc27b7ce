import { fetchAnswer, VIEW_LIMIT } from '../backends/answer-limits';
import type { RouterMetrics } from './metrics';
import { applyProfile, profileFor } from './profiles';
import { parsePrometheusText } from './prom-parse';

/**
 * Scrapes each pod's /metrics on an interval through its profile and keeps the latest RouterMetrics per pod.
 * A pod whose last good scrape is older than `staleAfter` intervals (or that missed that many in a row) is stale:
 * `metricsFor` then answers undefined, so metric strategies fall back instead of scoring old numbers.
 */

export interface ScrapeTarget {
  podId: string;
  /** Full URL of the metrics page, e.g. http://127.0.0.1:8001/metrics. */
  url: string;
  /** Profile name (clutch-layers, vllm, llama.cpp); anything else or empty → the module default. */
  profile?: string | null;
  /** Extra request headers (a remote node's engine metrics need the cluster token). */
  headers?: Record<string, string>;
}

export interface ScrapeRecord {
  podId: string;
  url: string;
  profile: string;
  metrics?: RouterMetrics;
  /** Clock time of the last good scrape. */
  scrapedAt?: number;
  /** Failed scrapes since the last good one. */
  misses: number;
  lastError?: string;
  stale: boolean;
}

export interface ScraperOptions {
  intervalMs?: number;
  timeoutMs?: number;
  /** Missed intervals after which a pod's metrics are stale. */
  staleAfter?: number;
  now?: () => number;
  onError?: (podId: string, message: string) => void;
}

interface Entry {
  target: ScrapeTarget;
  metrics?: RouterMetrics;
  scrapedAt?: number;
  misses: number;
  lastError?: string;
  /** The scrape in flight, shared by whoever asks meanwhile. */
  inflight?: Promise<void>;
}

export class MetricScraper {
  private readonly entries = new Map<string, Entry>();
  private timer: NodeJS.Timeout | undefined;
  readonly intervalMs: number;
  readonly timeoutMs: number;
  readonly staleAfter: number;
  private readonly now: () => number;

  constructor(private readonly opts: ScraperOptions = {}) {
    this.intervalMs = opts.intervalMs ?? 5_000;
    this.timeoutMs = opts.timeoutMs ?? Math.min(2_000, this.intervalMs);
    this.staleAfter = opts.staleAfter ?? 3;
    this.now = opts.now ?? Date.now;
  }

  /** Replaces the target list; pods that stay keep their latest metrics unless their URL or profile changed. */
  setTargets(targets: readonly ScrapeTarget[]): void {
    const next = new Map<string, Entry>();
    for (const t of targets) {
      const old = this.entries.get(t.podId);
      if (old && old.target.url === t.url && (old.target.profile ?? '') === (t.profile ?? '')) {
        old.target = t;
        next.set(t.podId, old);
      } else next.set(t.podId, { target: t, misses: 0 });
    }
    this.entries.clear();
    for (const [k, v] of next) this.entries.set(k, v);
  }

  start(): void {
    if (this.timer) return;
    void this.scrapeNow();
    this.timer = setInterval(() => void this.scrapeNow(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Scrapes every target once; a target whose previous scrape is still running is not asked twice (that one is awaited). */
  async scrapeNow(): Promise<void> {
    await Promise.all(
      [...this.entries.values()].map((e) => (e.inflight ??= this.scrapeOne(e).finally(() => (e.inflight = undefined)))),
    );
  }

  private async scrapeOne(entry: Entry): Promise<void> {
    const { target } = entry;
    try {
      const res = await fetch(target.url, {
        signal: AbortSignal.timeout(this.timeoutMs),
        headers: { accept: 'text/plain', ...target.headers },
      });
      if (!res.ok) {
        await res.body?.cancel();
        throw new Error(`HTTP ${res.status}`);
      }
      const text = await fetchAnswer(res).text(VIEW_LIMIT);
      entry.metrics = applyProfile(profileFor(target.profile), parsePrometheusText(text));
      entry.scrapedAt = this.now();
      entry.misses = 0;
      entry.lastError = undefined;
    } catch (err) {
      entry.misses += 1;
      const e = err as Error & { cause?: { message?: string } };
      entry.lastError =
        e.name === 'TimeoutError'
          ? `no answer within ${this.timeoutMs} ms`
          : e.cause?.message
            ? `${e.message}: ${e.cause.message}`
            : e.message;
      this.opts.onError?.(target.podId, entry.lastError);
    }
  }

  private isStale(e: Entry): boolean {
    if (e.scrapedAt === undefined) return true;
    return e.misses >= this.staleAfter || this.now() - e.scrapedAt > this.staleAfter * this.intervalMs;
  }

  /** The pod's latest metrics, or undefined when never scraped or stale. */
  metricsFor(podId: string): RouterMetrics | undefined {
    const e = this.entries.get(podId);
    return e && !this.isStale(e) ? e.metrics : undefined;
  }

  records(): ScrapeRecord[] {
    return [...this.entries.values()].map((e) => ({
      podId: e.target.podId,
      url: e.target.url,
      profile: profileFor(e.target.profile).name,
      metrics: e.metrics,
      scrapedAt: e.scrapedAt,
      misses: e.misses,
      lastError: e.lastError,
      stale: this.isStale(e),
    }));
  }
}
