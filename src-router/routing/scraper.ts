import { fetchAnswer, VIEW_LIMIT } from '../backends/answer-limits';
import type { RouterMetrics } from './metrics';
import { applyProfile, profileFor } from './profiles';
import { parsePrometheusText } from './prom-parse';

/**
 * Scrapes each pod's /metrics on an interval through its profile and keeps the latest RouterMetrics per pod.
 * A pod whose last good scrape is older than `staleAfter` intervals (or that missed that many in a row) is stale:
 * `metricsFor` then answers undefined, so metric strategies fall back instead of scoring old numbers.
 * One host (a member node, whose replicas are all scraped through it) gets at most `perHostMax` scrapes per interval,
 * in flight ones included: the pods that answered last time first (a running engine keeps fresh metrics), the others
 * in turn in at least a quarter of the budget, so a node that advertises many models is asked a bounded number of
 * times per interval and a model it loads later is still found.
 */

/** Scrapes of one host per interval, at most (a node runs one engine per lane, a few at once). */
export const SCRAPES_PER_HOST = 16;

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
  /** Scrapes of one host (URL host and port) per interval, at most; default `SCRAPES_PER_HOST`. */
  perHostMax?: number;
}

interface Entry {
  target: ScrapeTarget;
  /** The URL's host and port: what the per-host budget counts. */
  host: string;
  /** The interval of the last scrape started (0: never). */
  tried: number;
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
  readonly perHostMax: number;
  private readonly now: () => number;
  private round = 0;

  constructor(private readonly opts: ScraperOptions = {}) {
    this.intervalMs = opts.intervalMs ?? 5_000;
    this.timeoutMs = opts.timeoutMs ?? Math.min(2_000, this.intervalMs);
    this.staleAfter = opts.staleAfter ?? 3;
    this.perHostMax = opts.perHostMax ?? SCRAPES_PER_HOST;
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
      } else next.set(t.podId, { target: t, host: hostOf(t.url), tried: 0, misses: 0 });
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

  /**
   * Scrapes the targets of this interval once (every target, unless a host has more than its budget); a target whose
   * previous scrape is still running is not asked twice (that one is awaited).
   */
  async scrapeNow(): Promise<void> {
    const round = ++this.round;
    await Promise.all(
      this.pick().map(
        (e) =>
          (e.inflight ??= (() => {
            e.tried = round;
            return this.scrapeOne(e).finally(() => (e.inflight = undefined));
          })()),
      ),
    );
  }

  /** This interval's targets: every one of a host within its budget, else its scrapes in flight and the first due. */
  private pick(): Entry[] {
    const byHost = new Map<string, Entry[]>();
    for (const e of this.entries.values()) {
      const list = byHost.get(e.host);
      if (list) list.push(e);
      else byHost.set(e.host, [e]);
    }
    const picked: Entry[] = [];
    for (const list of byHost.values()) {
      if (list.length <= this.perHostMax) {
        picked.push(...list);
        continue;
      }
      // In flight first (they count), then those that answered last time, tried longest ago first, leaving a
      // quarter of the budget to the others in turn (an engine loaded since is found within a few intervals).
      const busy = list.filter((e) => e.inflight !== undefined);
      const byTried = (a: Entry, b: Entry) => a.tried - b.tried;
      const live = list.filter((e) => !e.inflight && answered(e)).sort(byTried);
      const rest = list.filter((e) => !e.inflight && !answered(e)).sort(byTried);
      const room = Math.max(0, this.perHostMax - busy.length);
      const liveTaken = Math.max(
        0,
        Math.min(live.length, Math.max(room - Math.ceil(this.perHostMax / 4), room - rest.length)),
      );
      picked.push(...busy, ...live.slice(0, liveTaken), ...rest.slice(0, room - liveTaken));
    }
    return picked;
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

/** The last scrape of this target answered. */
const answered = (e: Entry) => e.scrapedAt !== undefined && e.misses === 0;

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}
