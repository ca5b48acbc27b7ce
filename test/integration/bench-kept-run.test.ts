import { readFileSync, rmSync } from 'node:fs';
import { cpus, hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { benchRunDetailSchema, benchRunListSchema } from '../../src-router/contract';
import { ROUTER_VERSION } from '../../src-router/version';
import { runCli, startNode, TEST_CONSOLE_TOKEN, type TestNode, tempDir } from '../support/node-harness';

// ASSET-1: `routerdesk bench --store DIR` keeps the run (version, machine, summary, every row) in that node store, and
// the node's console API lists it. The fastest benchmark (planner-scale, --quick: pure, ~2 s) into a temp store.
describe('a benchmark run kept in the store (ASSET-1)', () => {
  const dir = tempDir();
  const store = join(dir, 'store');
  const jsonFile = join(dir, 'results.json');
  let node: TestNode;

  beforeAll(async () => {
    const run = await runCli(['bench', '--quick', '--only', 'planner-scale', '--json', jsonFile, '--store', store], {
      timeoutMs: 60_000,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(new RegExp(`bench: kept run [0-9a-f-]{36} \\(\\d+ rows\\) in ${store}`));
    node = await startNode({ dir, models: {}, config: { cluster: { store_dir: store } } });
  }, 90_000);
  afterAll(async () => {
    await node?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const get = (path: string) =>
    fetch(`${node.url}${path}`, { headers: { authorization: `Bearer ${TEST_CONSOLE_TOKEN}` } });

  it('the console lists the run with its version, machine and summary, and gives every row back', async () => {
    const { runs } = benchRunListSchema.parse(await node.console('/router/v1/console/bench/runs'));
    expect(runs).toHaveLength(1);
    const [run] = runs;
    expect(run).toMatchObject({ version: ROUTER_VERSION, quick: true, benchmarks: ['planner-scale'], failed: [] });
    expect(run.machine).toMatchObject({ hostname: hostname(), node: process.version, cpu: cpus()[0]?.model.trim() });
    expect(run.summary.map((l) => l.benchmark)).toEqual(['planner-scale']);
    expect(Date.parse(run.finishedAt)).toBeGreaterThanOrEqual(Date.parse(run.startedAt));

    const written = JSON.parse(readFileSync(jsonFile, 'utf8')) as ({ benchmark: string; scenario: string } & Record<
      string,
      unknown
    >)[];
    expect(run.rowCount).toBe(written.length);
    const detail = benchRunDetailSchema.parse(await node.console(`/router/v1/console/bench/runs/${run.id}`));
    expect(detail.run).toEqual(run);
    expect(detail.rows).toEqual(written.map(({ benchmark, scenario, ...fields }) => ({ benchmark, scenario, fields })));
  });

  it('an unknown run is a 404, a bad limit a 400 naming it', async () => {
    const missing = await get('/router/v1/console/bench/runs/nope');
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: unknown }).error).toMatchObject({ code: 'bench_run_not_found' });
    const bad = await get('/router/v1/console/bench/runs?limit=0');
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: unknown }).error).toMatchObject({ param: 'limit' });
  });
});
