import { type ChildProcess, spawn } from 'node:child_process';
import { CLI } from './node-harness';

export interface SimProcess {
  url: string;
  proc: ChildProcess;
  /** GET /sim/stats. */
  stats(): Promise<{
    requests: number;
    completed: number;
    cancelled: number;
    active: number;
    queued: number;
    loaded: boolean;
  }>;
  stop(): Promise<void>;
}

/** A standalone sim engine process (`routerdesk sim-engine --port 0 …`), resolved once it prints its URL. */
export async function startSimProcess(args: string[]): Promise<SimProcess> {
  const proc = spawn(process.execPath, [CLI, 'sim-engine', '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`sim-engine did not start:\n${out}`)), 15_000);
    proc.stdout!.on('data', () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`sim-engine exited with ${code}:\n${out}`));
    });
  });
  return {
    url,
    proc,
    stats: async () => (await (await fetch(`${url}/sim/stats`)).json()) as Awaited<ReturnType<SimProcess['stats']>>,
    stop: async () => {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      const t = setTimeout(() => proc.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(t);
    },
  };
}
