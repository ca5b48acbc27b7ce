/**
 * The demo's traffic generator: in the demo's own process, a burst every `periodMs` — chat and image
 * jobs to gpu-a (more than it drains alone before the next burst, so it lends to gpu-b), a tiny-chat request to the
 * master's llama.cpp engine, and from the fourth burst on, now and then, gpu-b's own chat (its own work takes its
 * engine back: hand-backs, HELPER-1). Bounded: at most `maxInFlight` requests at once (a burst skips what would
 * exceed it), each with a time-out; `stop()` aborts what is in flight and resolves when every request ended.
 */
import type { DemoNodeId } from './demo-cluster';

export interface TrafficShot {
  node: DemoNodeId;
  path: string;
  body: Record<string, unknown>;
}

const chat = (node: DemoNodeId, model: string, maxTokens: number): TrafficShot => ({
  node,
  path: '/v1/chat/completions',
  body: {
    model,
    messages: [{ role: 'user', content: 'Tell me about lending queued work between GPUs.' }],
    max_tokens: maxTokens,
  },
});
const image = (node: DemoNodeId): TrafficShot => ({
  node,
  path: '/v1/images/generations',
  body: { model: 'sd-1.5', prompt: 'a lighthouse at dusk', size: '512x512', steps: 20, n: 1 },
});

/**
 * The requests of burst `k` (0-based). gpu-b's own work comes from the fourth burst on only: while an own request of
 * gpu-b waits, no lease goes to it (HELPER-1), nor a probe until it idled `offload_probe_idle` after (PROBE-3); its
 * image model is loaded by the demo through the node API instead (`preloadModel`), which is not own work.
 */
export function demoBurst(k: number): TrafficShot[] {
  const shots = [48, 64, 96, 48, 64, 96].map((t) => chat('gpu-a', 'chat-7b', t));
  shots.push(image('gpu-a'), image('gpu-a'), image('gpu-a'), chat('master', 'tiny-chat', 16));
  if (k >= 3 && k % 4 === 3) shots.push(chat('gpu-b', 'chat-7b', 32));
  return shots;
}

export interface TrafficCounts {
  sent: number;
  answered: number;
  failed: number;
  skipped: number;
}

export class DemoTraffic {
  private readonly ctl = new AbortController();
  private readonly inFlight = new Set<Promise<void>>();
  private loop: Promise<void> | null = null;
  readonly counts: TrafficCounts = { sent: 0, answered: 0, failed: 0, skipped: 0 };

  constructor(
    private readonly urls: Record<DemoNodeId, string>,
    private readonly o: {
      periodMs: number;
      maxInFlight: number;
      timeoutMs: number;
      burst?: (k: number) => TrafficShot[];
    } = { periodMs: 10_000, maxInFlight: 32, timeoutMs: 120_000 },
  ) {}

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.ctl.abort();
    await this.loop;
    await Promise.allSettled([...this.inFlight]);
  }

  private async run(): Promise<void> {
    const burst = this.o.burst ?? demoBurst;
    for (let k = 0; !this.ctl.signal.aborted; k++) {
      for (const shot of burst(k)) {
        if (this.inFlight.size >= this.o.maxInFlight) {
          this.counts.skipped++;
          continue;
        }
        const p = this.send(shot).finally(() => this.inFlight.delete(p));
        this.inFlight.add(p);
      }
      await wait(this.o.periodMs, this.ctl.signal);
    }
  }

  private async send(shot: TrafficShot): Promise<void> {
    this.counts.sent++;
    try {
      const res = await fetch(`${this.urls[shot.node]}${shot.path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(shot.body),
        signal: AbortSignal.any([this.ctl.signal, AbortSignal.timeout(this.o.timeoutMs)]),
      });
      await res.arrayBuffer();
      if (res.ok) this.counts.answered++;
      else this.counts.failed++;
    } catch {
      if (!this.ctl.signal.aborted) this.counts.failed++;
    }
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function wait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
