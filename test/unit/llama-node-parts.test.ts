// The pure parts of the llama-node engine: the FIFO slot pool, argument parsing and the metrics text.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EngineMetrics } from '../../src-router/engines/llama-node/engine-metrics';
import { parseLlamaEngineArgs, parseMakeModelArgs, UsageError } from '../../src-router/engines/llama-node/main';
import {
  findLlamaRuntime,
  LLAMA_RUNTIME_ENV,
  NODE_LLAMA_CPP_VERSION,
} from '../../src-router/engines/llama-node/runtime';
import { SlotAbortedError, SlotPool } from '../../src-router/engines/llama-node/slot-pool';

describe('SlotPool', () => {
  it('hands out free slots, then queues first come first served', async () => {
    const pool = new SlotPool(['a', 'b']);
    expect([await pool.acquire(), await pool.acquire()]).toEqual(['a', 'b']);
    const order: string[] = [];
    const waiting = [1, 2, 3].map((i) => pool.acquire().then((slot) => order.push(`${i}:${slot}`)));
    expect(pool.queued).toBe(3);
    pool.release('b');
    pool.release('a');
    await Promise.all(waiting.slice(0, 2));
    expect(order).toEqual(['1:b', '2:a']);
    expect(pool.active).toBe(2);
    pool.release('a');
    await waiting[2];
    expect(order[2]).toBe('3:a');
  });

  it('drops a waiter whose signal aborts, and the next one gets the slot', async () => {
    const pool = new SlotPool([0]);
    await pool.acquire();
    const abort = new AbortController();
    const gone = pool.acquire(abort.signal);
    const next = pool.acquire();
    abort.abort();
    await expect(gone).rejects.toBeInstanceOf(SlotAbortedError);
    expect(pool.queued).toBe(1);
    pool.release(0);
    expect(await next).toBe(0);
  });

  it('releases the slot however the work ends', async () => {
    const pool = new SlotPool(['only']);
    await expect(pool.with(undefined, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(pool.active).toBe(0);
    pool.close();
    await expect(pool.acquire()).rejects.toThrow(/shutting down/);
  });
});

describe('llama-engine arguments', () => {
  const dir = mkdtempSync(join(tmpdir(), 'llama-args-'));
  const model = join(dir, 'm.gguf');
  writeFileSync(model, 'GGUF');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('parses every flag', () => {
    const args = parseLlamaEngineArgs([
      '--host',
      '0.0.0.0',
      '--port',
      '0',
      '--model',
      model,
      '--alias',
      'm',
      '--ctx',
      '512',
      '--parallel',
      '3',
      '--threads',
      '2',
      '--no-mmap',
      '--exit-with-stdin',
    ]);
    expect(args.exitWithStdin).toBe(true);
    expect(args.options).toEqual({
      host: '0.0.0.0',
      port: 0,
      modelPath: model,
      alias: 'm',
      contextSize: 512,
      parallel: 3,
      threads: 2,
      useMmap: false,
    });
  });

  it('fills defaults', () => {
    expect(parseLlamaEngineArgs(['--model', model]).options).toMatchObject({
      host: '127.0.0.1',
      port: 8080,
      parallel: 1,
      threads: 1,
      useMmap: true,
      contextSize: undefined,
    });
  });

  it('rejects bad arguments with a usage error', () => {
    for (const argv of [
      [],
      ['--model', join(dir, 'missing.gguf')],
      ['--model', model, '--port', 'x'],
      ['--model', model, '--parallel', '0'],
      ['--model', model, '--what'],
    ])
      expect(() => parseLlamaEngineArgs(argv), argv.join(' ')).toThrow(UsageError);
  });

  it('parses make-model arguments', () => {
    expect(
      parseMakeModelArgs([
        'out.gguf',
        '--embd',
        '128',
        '--layers',
        '4',
        '--type',
        'q8_0',
        '--seed',
        '9',
        '--heads',
        '8',
      ]),
    ).toMatchObject({
      out: 'out.gguf',
      embd: 128,
      layers: 4,
      type: 'q8_0',
      seed: 9,
      heads: 8,
    });
    expect(() => parseMakeModelArgs(['out.gguf', '--type', 'q4'])).toThrow(UsageError);
    expect(() => parseMakeModelArgs([])).toThrow(UsageError);
  });
});

describe('EngineMetrics', () => {
  it('renders Prometheus text with the clutch gauges', () => {
    const m = new EngineMetrics();
    const end = m.begin('chat');
    m.cancelled = 2;
    m.generatedTokens = 40;
    const text = m.render({ active: 1, queued: 3, total: 2 }, true);
    expect(text).toContain('llama_node_requests_total{endpoint="chat"} 1');
    expect(text).toContain('llama_node_requests_active 1');
    expect(text).toContain('llama_node_cancelled_total 2');
    expect(text).toContain('llama_node_tokens_generated_total 40');
    expect(text).toContain('clutch_active_slots 1');
    expect(text).toContain('clutch_queue_depth 3');
    expect(text).toContain('# TYPE clutch_queue_depth gauge');
    end();
    end();
    expect(m.active).toBe(0);
  });
});

describe('findLlamaRuntime', () => {
  it('finds resources/llama-runtime above the module, or where the environment says', () => {
    const found = findLlamaRuntime({}, undefined);
    expect(found).toMatchObject({ via: 'module', version: NODE_LLAMA_CPP_VERSION });
    expect(found.dir).toMatch(/resources[/\\]llama-runtime$/);
    expect(findLlamaRuntime({ [LLAMA_RUNTIME_ENV]: found.dir }).via).toBe('env');
    expect(() => findLlamaRuntime({ [LLAMA_RUNTIME_ENV]: tmpdir() })).toThrow(LLAMA_RUNTIME_ENV);
  });
});
