/**
 * What the fault suite needs of the nodes it starts: a scope that adds settings to every node's config (server
 * limits, Redis, time-outs) and also stops other children it adopts (redis-server); each node's engines (pid, port)
 * from the console's lanes; the sim engines' seen rings, polled while a scenario runs and snapshotted right before a
 * fault kills or freezes an engine; and the nodes' resident memory.
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { ModelConfigInput, NodeConfigInput } from '../config';
import type { SeenEntry } from '../engines/sim';
import type { EngineSeen } from './faults-count';
import { vmRssMb } from './faults-count';
import { BENCH_CONSOLE_TOKEN, BenchScope, type CliProcess, type Launch, sleep } from './scope';

type Section = 'server' | 'cluster' | 'models' | 'backend' | 'redis' | 'console' | 'routing';
type Extra = { [K in Section]?: Record<string, unknown> };

/** A BenchScope whose nodes all get `extra` merged into their config (section by section), e.g. for Trio.start. */
export class FaultScope extends BenchScope {
  constructor(private readonly extra: Extra | ((config: NodeConfigInput) => Extra) = {}) {
    super();
  }

  override startNode(
    models: Record<string, ModelConfigInput>,
    config: NodeConfigInput = {},
    launch?: Launch,
  ): Promise<CliProcess> {
    const extra = typeof this.extra === 'function' ? this.extra(config) : this.extra;
    const merged: Record<string, unknown> = { ...config };
    for (const [k, v] of Object.entries(extra))
      merged[k] = { ...((config as Record<string, unknown>)[k] as object), ...v };
    return super.startNode(models, merged as NodeConfigInput, launch);
  }
}

export interface EngineLane {
  lane: string;
  loaded: string | null;
  state: string;
  pid: number | null;
  port: number | null;
  inflight: number;
  queued: number;
}

const consoleAuth = { authorization: `Bearer ${BENCH_CONSOLE_TOKEN}` };

export async function lanesOf(node: CliProcess, timeoutMs = 2_000): Promise<EngineLane[]> {
  const res = await fetch(`${node.url}/router/v1/console/lanes`, {
    headers: consoleAuth,
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (!res.ok) throw new Error(`lanes of ${node.url}: ${res.status}`);
  return ((await res.json()) as { lanes: EngineLane[] }).lanes;
}

export const alive = (p: CliProcess) => p.proc.exitCode === null && p.proc.signalCode === null;

interface Watched {
  /** The node whose engine it is (the watch's name for it). */
  node: string;
  name: string;
  port: number;
  entries: Map<number, SeenEntry>;
  cutByFault: boolean;
  /** Not polled any more (frozen or gone). */
  skip: boolean;
}

/**
 * Every sim engine of these nodes during a scenario, by pid: their seen rings merged (by arrival number) from
 * polls every `everyMs` and from snapshots taken right before a fault.
 */
export class EngineWatch {
  private readonly engines = new Map<number, Watched>();
  private readonly lastLanes = new Map<string, EngineLane[]>();
  private timer?: NodeJS.Timeout;
  private polling?: Promise<void>;

  /** `readSeen`: how an engine's ring is read (default: from this machine; a network host's engine from inside it). */
  constructor(
    private readonly nodes: Record<string, CliProcess>,
    private readonly readSeen: (node: string, port: number) => Promise<unknown> = async (_node, port) =>
      (await fetch(`http://127.0.0.1:${port}/sim/seen`, { signal: AbortSignal.timeout(1_000) })).json(),
  ) {}

  /** Polls the nodes' lanes and every engine's ring once. */
  async refresh(): Promise<void> {
    await Promise.all(
      Object.entries(this.nodes).map(async ([name, node]) => {
        if (!alive(node)) return;
        const lanes = await lanesOf(node).catch(() => null);
        if (lanes) this.lastLanes.set(name, lanes);
        for (const l of lanes ?? []) {
          if (l.pid && l.port && !this.engines.has(l.pid))
            this.engines.set(l.pid, {
              node: name,
              name: `${name}/${l.loaded ?? l.lane}#${l.pid}`,
              port: l.port,
              entries: new Map(),
              cutByFault: false,
              skip: false,
            });
        }
      }),
    );
    await Promise.all([...this.engines.entries()].map(([pid, w]) => (w.skip ? undefined : this.poll(pid, w))));
  }

  private async poll(pid: number, w: Watched): Promise<void> {
    try {
      const seen = (await this.readSeen(w.node, w.port)) as { pid: number; entries: SeenEntry[] };
      if (seen.pid !== pid) return; // the port now belongs to another engine
      for (const e of seen.entries) w.entries.set(e.n, e);
    } catch {
      /* stopped, frozen or not a sim engine: keep what was read */
    }
  }

  start(everyMs = 250): void {
    const tick = () => {
      this.polling = this.refresh().finally(() => {
        if (this.timer !== undefined) this.timer = setTimeout(tick, everyMs);
      });
    };
    this.timer = setTimeout(tick, 0);
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.polling;
    await this.refresh();
  }

  /** The engines a node ran at its last successful lanes poll. */
  enginesOf(name: string): EngineLane[] {
    return (this.lastLanes.get(name) ?? []).filter((l) => l.pid && l.port);
  }

  /**
   * Takes the last look at a node's engines with the node itself paused (SIGSTOP: it sends nothing more to them and
   * relays nothing more from them), then runs `fault` (which kills or freezes); its engines count as cut by the fault.
   * `resume` continues the node afterwards (SIGCONT) when the fault was not its death.
   */
  async faultOn(
    name: string,
    fault: (engines: EngineLane[]) => void,
    o: { engines?: 'all' | number; resume?: boolean } = {},
  ): Promise<EngineLane[]> {
    const node = this.nodes[name];
    const engines = this.enginesOf(name).filter(
      (l) => o.engines === undefined || o.engines === 'all' || l.pid === o.engines,
    );
    node.proc.kill('SIGSTOP');
    try {
      await Promise.all(
        engines.map((l) => this.engines.get(l.pid!)).map((w, i) => (w ? this.poll(engines[i].pid!, w) : undefined)),
      );
      for (const l of engines) {
        const w = this.engines.get(l.pid!);
        if (w) {
          w.cutByFault = true;
          w.skip = true;
        }
      }
      fault(engines);
    } finally {
      if (o.resume) node.proc.kill('SIGCONT');
    }
    return engines;
  }

  seen(): EngineSeen[] {
    return [...this.engines.values()].map((w) => ({
      engine: w.name,
      cutByFault: w.cutByFault,
      entries: [...w.entries.values()],
    }));
  }
}

/** The summed resident memory (VmRSS) of these processes, in MB; a process that is gone adds nothing. */
export function rssMb(procs: CliProcess[]): number {
  let mb = 0;
  for (const p of procs) {
    if (!p.proc.pid || !alive(p)) continue;
    try {
      mb += vmRssMb(readFileSync(`/proc/${p.proc.pid}/status`, 'utf8')) ?? 0;
    } catch {
      /* gone meanwhile */
    }
  }
  return Math.round(mb * 10) / 10;
}

export { pidAlive } from '../store/store-lock';

/** Waits until `check` holds, at most `ms`; returns whether it did. */
export async function within(ms: number, check: () => boolean | Promise<boolean>, everyMs = 25): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await sleep(everyMs);
  }
}
