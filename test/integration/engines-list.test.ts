import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enginesAnswerSchema } from '../../src-router/contract';
import { runCli, startNode, type TestNode } from '../support/node-harness';
import { REAL_ENGINES_TIMEOUT_MS, type RealEngines, realEngines } from '../support/real-engines';

// `routerdesk engines build` reuses what it built (a second call builds nothing), and `engines list --json` and
// GET /router/v1/console/engines report the built llama-server and whisper-server with the versions they print.

describe('routerdesk engines', () => {
  let engines: RealEngines;
  let node: TestNode;

  beforeAll(async () => {
    engines = await realEngines();
    node = await startNode({
      models: {
        t: { name: 'talker', backend: 'sim', capabilities: ['text'], sim: { load_time: '10ms', token_time: '1ms' } },
      },
    });
  }, REAL_ENGINES_TIMEOUT_MS);

  afterAll(async () => {
    await node?.stop();
  });

  it('a second build reuses both engines, with each step’s time recorded when they were built', async () => {
    const { code, stdout, stderr } = await runCli(['engines', 'build', '--json'], { timeoutMs: 60_000 });
    expect(code, stderr).toBe(0);
    const { builds } = JSON.parse(stdout) as {
      builds: {
        engine: string;
        binary: string;
        reused: boolean;
        steps: { step: string; seconds: number }[];
        version: string | null;
      }[];
    };
    expect(builds.map((b) => [b.engine, b.binary, b.reused])).toEqual([
      ['llama-server', engines.llamaServer, true],
      ['whisper-server', engines.whisperServer, true],
    ]);
    expect(builds[0]!.steps.map((s) => s.step)).toEqual(['clone', 'configure', 'compile', 'install']);
    expect(builds[1]!.steps.map((s) => s.step)).toEqual(['configure', 'compile', 'install']);
    expect(stderr).toMatch(/llama-server: reused/);
  });

  it('engines list --json reports both with their versions', async () => {
    const { code, stdout, stderr } = await runCli(['engines', 'list', '--json'], { timeoutMs: 60_000 });
    expect(code, stderr).toBe(0);
    const listed = JSON.parse(stdout) as { engines: unknown[]; builds: { engine: string; binary: string }[] };
    const answer = enginesAnswerSchema.parse({ engines: listed.engines });
    const llama = answer.engines.find((e) => e.family === 'llama-server')!;
    const whisper = answer.engines.find((e) => e.family === 'whisper-server')!;
    // On PATH wins over the cache; on this machine's test runs neither is on PATH, so the cache's builds run.
    if (llama.found_in === 'cache') expect(llama.path).toBe(engines.llamaServer);
    expect(llama).toMatchObject({ available: true, reason: null });
    expect(llama.version).toMatch(/^version: \S+.*; built with /);
    if (whisper.found_in === 'cache') expect(whisper.path).toBe(engines.whisperServer);
    expect(whisper.version).toMatch(/whisper\.cpp/);
    expect(listed.builds.map((b) => b.binary)).toEqual(
      expect.arrayContaining([engines.llamaServer, engines.whisperServer]),
    );
  });

  it('GET /router/v1/console/engines says the same', async () => {
    const answer = enginesAnswerSchema.parse(await node.console('/router/v1/console/engines'));
    const llama = answer.engines.find((e) => e.family === 'llama-server')!;
    expect(llama).toMatchObject({ available: true, reason: null, how_to_get: null });
    expect(llama.version).toMatch(/^version: \S+/);
    expect(answer.engines.find((e) => e.family === 'whisper-server')).toMatchObject({ available: true });
  });
});
