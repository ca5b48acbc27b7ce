/**
 * The boot self-test line of one external engine family: which binary the node's models of that family will run
 * (path, `--version`, and whether PATH, the engines cache or the config named it), or, when there is none, what to do.
 */
import { isAbsolute } from 'node:path';
import { cachedBuilds, EXTERNAL_ENGINES } from '../backends/engine-binaries';
import { enginesCacheRoot, isBuildable } from '../backends/engine-build/cache-key';
import { probeVersion } from '../backends/engine-build/version-probe';
import { engineEnv } from '../backends/engine-env';
import { resolveExecutable } from './self-test-checks';
import type { SelfTestCheck } from './self-tests';

/** Shorter than the self-test runner's own timeout, so a hanging `--version` reports itself instead of timing the check out. */
const PROBE_MS = 3000;

type External = keyof typeof EXTERNAL_ENGINES;

export function engineFamilyCheck(
  family: External,
  command: string,
  opts: { pathEnv?: string; cacheRoot?: string } = {},
): SelfTestCheck {
  const cacheRoot = opts.cacheRoot ?? enginesCacheRoot();
  return {
    name: `engine ${family} binary`,
    run: async () => {
      const pathEnv = opts.pathEnv ?? process.env.PATH ?? '';
      const found = await resolveExecutable(command, pathEnv);
      if (!found) {
        const bare = !isAbsolute(command) && !command.includes('/');
        const { binary, howToGet } = EXTERNAL_ENGINES[family];
        if (bare && command === binary && isBuildable(binary))
          return { status: 'warn', detail: `${binary} not on PATH and not built: run ${howToGet}` };
        return {
          status: 'fail',
          detail: `${command}: ${bare ? 'not found on PATH' : 'not found or not executable'} (get it: ${howToGet})`,
        };
      }
      const build = isBuildable(family) ? cachedBuilds(family, cacheRoot).find((b) => b.binary === found) : undefined;
      const where = build ? 'the engines cache' : found === command ? 'the config' : 'PATH';
      const probe = await probeVersion(found, { ...engineEnv(process.env), PATH: pathEnv }, PROBE_MS);
      if (probe.error) return { status: 'fail', detail: `${found} from ${where}: ${probe.error}` };
      const version =
        probe.version ??
        build?.version ??
        (probe.timedOut ? `--version did not finish within ${PROBE_MS / 1000} s` : 'no --version');
      return { status: 'pass', detail: `${found} (${version}) from ${where}` };
    },
  };
}
