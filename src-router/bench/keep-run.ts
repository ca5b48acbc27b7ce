import { existsSync } from 'node:fs';
import { arch, availableParallelism, cpus, hostname, platform, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { loadNodeConfig } from '../config';
import type { BenchMachine } from '../contract';
import { DEFAULT_SERVE_DIR } from '../paths';
import { type BenchRunInput, BenchStore, openStore } from '../store';

/**
 * ASSET-1: `routerdesk bench` keeps each run — version, machine, summary, every row — in the store of the node it is
 * pointed at: `--store DIR`, by default the store of the `serve` folder (`.routerdesk/`: its node config's
 * `cluster.store_dir`, else `.routerdesk/store`). The run is written straight into `router.db` in one short SQLite
 * transaction (WAL, busy timeout), so it works while that node runs; the store lock is for node processes.
 */

export function defaultBenchStore(cwd = process.cwd()): string {
  const dir = resolve(cwd, DEFAULT_SERVE_DIR);
  const config = join(dir, 'node.yaml');
  return existsSync(config) ? loadNodeConfig(config).cluster.store_dir : join(dir, 'store');
}

export function benchMachine(): BenchMachine {
  return {
    hostname: hostname(),
    platform: platform(),
    arch: arch(),
    node: process.version,
    cores: availableParallelism(),
    cpu: cpus()[0]?.model.trim() ?? 'unknown cpu',
    memoryBytes: totalmem(),
  };
}

/** Records the run in the store at `storeDir` (created and migrated if new); returns the run's id. */
export function keepRun(storeDir: string, run: BenchRunInput): string {
  const db = openStore(storeDir);
  try {
    return new BenchStore(db).record(run);
  } finally {
    db.close();
  }
}
