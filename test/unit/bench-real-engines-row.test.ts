import { describe, expect, it } from 'vitest';
import { notRunRow, realExtra, realModel, report } from '../../src-router/bench/lending-scenarios';
import { parseModelConfig } from '../../src-router/config';

// The real-engines lending scenario has a row per engine kind; a llama-server that is not built gives a row saying
// how to build it (the bench goes on), and the llama-server models run the bare `llama-server` a node resolves.

describe('real-engines bench rows', () => {
  it('a missing llama-server is a "not run" row naming the build command, not a failure', () => {
    const row = notRunRow(
      'llama-server',
      'llama-server not on PATH and not built: run routerdesk engines build --only llama-server',
    );
    expect(row).toMatchObject({
      benchmark: 'lending-scenarios',
      scenario: 'real-engines',
      engine: 'llama-server',
      makespan_ms: null,
    });
    const result = report([row]);
    expect(result.json).toEqual([row]);
    expect(result.tables[0]!.rows[0]![0]).toBe('real-engines (llama-server)');
    expect(result.tables[0]!.rows[0]!.at(-1)).toBe('not run');
    expect(result.tables[0]!.rows[0]!.at(-2)).toContain('routerdesk engines build --only llama-server');
    expect(result.summary[0]!.value).toBe('not run');
  });

  it('llama-server models name the bare binary (PATH, else the engines cache), one thread, no --jinja, no high bytes; llama-node models stay built in', () => {
    const server = realModel('llama-server', 'llama-a', '/tmp/a.gguf');
    expect(server.backend).toBe('llama-server');
    expect(server.command!.split(' ')[0]).toBe('llama-server');
    expect(server.command).toContain('-t 1');
    expect(server.command).not.toContain('--jinja');
    // The high bytes are banned on llama-server (its answers must be UTF-8 text): the 128 byte tokens 0x80-0xFF.
    const bias = realExtra('llama-server').logit_bias as Record<string, number>;
    expect(Object.keys(bias)).toHaveLength(128);
    expect(Object.values(bias).every((v) => v === -100)).toBe(true);
    expect(realExtra('llama-server')).toMatchObject({ temperature: 0, ignore_eos: true });
    expect(realExtra('llama-node')).toEqual({ temperature: 0 });
    expect(parseModelConfig(server, 'llama-a.yaml', '/tmp').command).toBe(server.command);
    expect(realModel('llama-node', 'llama-a', '/tmp/a.gguf').backend).toBe('llama-node');
  });
});
