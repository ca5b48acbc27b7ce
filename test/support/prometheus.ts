import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src-router/backends/free-port';
import { eventually } from './node-harness';
import { ensurePrometheus } from './system-deps';

/** One series of an instant query's answer. */
export interface PromSample {
  metric: Record<string, string>;
  value: number;
}

export interface TestPrometheus {
  url: string;
  /** Runs an instant PromQL query (`/api/v1/query`); rejects on an error answer. */
  query(promql: string): Promise<PromSample[]>;
  /** Resolves once every target was scraped successfully at or after `since` (ms). */
  scrapedSince(since: number): Promise<void>;
  /** SIGTERM, SIGKILL after 5 s; the storage folder is removed. */
  stop(): Promise<void>;
}

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/**
 * Debian's Prometheus on a free loopback port, with a generated config scraping `targets` (name → base URL) every
 * `scrapeMs` (each is its `instance`), and its own temp storage. Found or installed, never skipped.
 */
export async function startPrometheus(targets: Record<string, string>, scrapeMs = 1_000): Promise<TestPrometheus> {
  const bin = ensurePrometheus();
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'routerdesk-prometheus-'));
  const interval = `${scrapeMs}ms`;
  const config = [
    'global:',
    `  scrape_interval: ${interval}`,
    `  scrape_timeout: ${interval}`,
    'scrape_configs:',
    '  - job_name: routerdesk',
    '    metrics_path: /metrics',
    '    static_configs:',
    ...Object.values(targets).map((url) => `      - targets: ['${new URL(url).host}']`),
  ].join('\n');
  writeFileSync(join(dir, 'prometheus.yml'), `${config}\n`);
  const child = spawn(
    bin,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--storage.tsdb.retention.time=1h',
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  live.add(child);
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => (live.delete(child), resolve())));
  const url = `http://127.0.0.1:${port}`;

  const api = async <T>(path: string): Promise<T> => {
    const res = await fetch(`${url}${path}`, { signal: AbortSignal.timeout(5_000) });
    const body = (await res.json()) as { status: string; data: T; error?: string };
    if (body.status !== 'success') throw new Error(`prometheus ${path}: ${body.error ?? res.status}`);
    return body.data;
  };
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(t);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await eventually(async () => (await fetch(`${url}/-/ready`)).ok, {
      timeoutMs: 30_000,
      what: `prometheus ready (${stderr.trim() || 'no output'})`,
    });
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    url,
    stop,
    async query(promql) {
      const data = await api<{
        resultType: string;
        result: { metric: Record<string, string>; value: [number, string] }[];
      }>(`/api/v1/query?query=${encodeURIComponent(promql)}`);
      if (data.resultType !== 'vector') throw new Error(`${promql}: a ${data.resultType}, not an instant vector`);
      return data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
    },
    async scrapedSince(since) {
      await eventually(
        async () => {
          const t = await api<{
            activeTargets: { health: string; lastScrape: string; lastError: string; scrapeUrl: string }[];
          }>('/api/v1/targets?state=active');
          const bad = t.activeTargets.filter((a) => a.health !== 'up' || Date.parse(a.lastScrape) < since);
          if (bad.length) throw new Error(bad.map((b) => `${b.scrapeUrl}: ${b.health} ${b.lastError}`).join('; '));
          return t.activeTargets.length === Object.keys(targets).length;
        },
        { timeoutMs: 30_000, everyMs: 200, what: 'a scrape of every target' },
      );
    },
  };
}
