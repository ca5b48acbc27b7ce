/** `routerdesk engines build|list`: build llama-server and whisper-server from the shipped sources; show what each family runs. */
import { parseArgs } from 'node:util';
import { cachedBuilds, describeEngines } from '../backends/engine-binaries';
import { type BuildResult, buildEngine } from '../backends/engine-build/build-engine';
import { BUILDABLE, type BuildableEngine, enginesCacheRoot, isBuildable } from '../backends/engine-build/cache-key';

export const ENGINES_USAGE = `usage: routerdesk engines build [--only llama-server|whisper-server] [--json]
       routerdesk engines list [--json]
  build   builds llama-server (llama.cpp from node-llama-cpp's bundle) and whisper-server (whisper.cpp from the
          nodejs-whisper package) into ${enginesCacheRoot()}; a finished build is reused
  list    what each engine family runs here (PATH first, then the cache), with each binary's --version
`;

class UsageError extends Error {}

function parse(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      options: { only: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

const buildJson = (r: BuildResult) => ({
  engine: r.engine,
  binary: r.binary,
  folder: r.folder,
  key: r.key,
  reused: r.reused,
  seconds: r.record.seconds,
  steps: r.record.steps,
  built_at: r.record.built_at,
  version: r.record.version,
  source: r.record.source,
});

async function build(only: string | undefined, json: boolean): Promise<void> {
  if (only !== undefined && !isBuildable(only))
    throw new UsageError(`--only must be one of ${BUILDABLE.join(', ')}, got '${only}'`);
  const engines: BuildableEngine[] = only ? [only] : [...BUILDABLE];
  const results: BuildResult[] = [];
  // Progress goes to stderr, so `--json` leaves stdout to the answer alone.
  const progress = (line: string) => process.stderr.write(`engines build: ${line}\n`);
  for (const engine of engines) {
    const result = await buildEngine(engine, { progress });
    results.push(result);
    const how = result.reused
      ? `reused (built ${result.record.built_at} in ${result.record.seconds} s)`
      : `built in ${result.record.seconds} s`;
    progress(`${engine}: ${how}: ${result.binary}${result.record.version ? ` (${result.record.version})` : ''}`);
  }
  if (json) process.stdout.write(`${JSON.stringify({ builds: results.map(buildJson) }, null, 2)}\n`);
  else for (const r of results) process.stdout.write(`${r.engine}\t${r.binary}\n`);
}

async function list(json: boolean): Promise<void> {
  const engines = await describeEngines();
  const builds = BUILDABLE.flatMap((engine) =>
    cachedBuilds(engine).map((b) => ({
      engine,
      folder: b.folder,
      binary: b.binary,
      key: b.key,
      built_at: b.builtAt,
      version: b.version,
    })),
  );
  if (json) return void process.stdout.write(`${JSON.stringify({ engines, builds }, null, 2)}\n`);
  const rows = engines.map((e) => [
    e.family,
    e.available ? 'yes' : 'no',
    e.found_in ?? '-',
    e.path ?? e.reason ?? '',
    e.version ?? (e.available ? '' : `get: ${e.how_to_get}`),
  ]);
  const head = ['family', 'available', 'found in', 'path', 'version'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  for (const r of [head, ...rows])
    process.stdout.write(`${r.map((c, i) => (i < r.length - 1 ? c.padEnd(widths[i]!) : c)).join('  ')}\n`);
  process.stdout.write(`\nbuilt in ${enginesCacheRoot()}: ${builds.length ? '' : 'nothing'}\n`);
  for (const b of builds) process.stdout.write(`  ${b.engine}  ${b.key}  ${b.built_at}  ${b.version ?? ''}\n`);
}

export async function enginesCommand(argv: string[]): Promise<void> {
  let values: ReturnType<typeof parse>['values'];
  let positionals: string[];
  try {
    ({ values, positionals } = parse(argv));
    if (values.help) return void process.stdout.write(ENGINES_USAGE);
    const [sub, ...extra] = positionals;
    if (extra.length) throw new UsageError(`unexpected argument '${extra[0]}'`);
    if (sub === 'build') return await build(values.only, values.json === true);
    if (sub === 'list') {
      if (values.only !== undefined) throw new UsageError('--only applies to build');
      return await list(values.json === true);
    }
    throw new UsageError(sub ? `unknown subcommand '${sub}'` : 'build or list?');
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`routerdesk engines: ${err.message}\n\n${ENGINES_USAGE}`);
    process.exitCode = 2;
  }
}
