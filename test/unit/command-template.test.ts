import { describe, expect, it } from 'vitest';
import { parseModelConfig } from '../../src-router/config';
import { adapterFor, expandCommand } from '../../src-router/engines';

describe('command templates', () => {
  it('splits words, honours quotes and escapes, fills placeholders', () => {
    expect(
      expandCommand(`llama-server --port \${PORT} -m "\${MODEL}" --alias '\${ALIAS}' --x a\\ b`, {
        PORT: 9001,
        MODEL: '/m/my model.gguf',
        ALIAS: 'tiny',
      }),
    ).toEqual(['llama-server', '--port', '9001', '-m', '/m/my model.gguf', '--alias', 'tiny', '--x', 'a b']);
  });

  it('refuses a placeholder without a value and an unclosed quote', () => {
    expect(() => expandCommand('x ${MODEL}', {})).toThrow(/\$\{MODEL\}/);
    expect(() => expandCommand('x "abc', {})).toThrow(/unclosed/);
  });
});

describe('engine adapters', () => {
  const cfg = (raw: Record<string, unknown>) => parseModelConfig({ name: 'm', ...raw }, 'm.yaml', '/models');
  const ctx = {
    host: '127.0.0.1',
    port: 9100,
    localId: 'm-local',
    cli: { node: '/usr/bin/node', script: '/app/out/main/cli.js' },
  };

  it('puts each family in its lane (HEALTH-3)', () => {
    expect(adapterFor(cfg({ backend: 'llama-server', model: 'a.gguf' }), 'llama_sdcpp').lane).toBe('text');
    expect(adapterFor(cfg({ backend: 'vllm', model: 'x' }), 'llama_sdcpp').lane).toBe('text');
    expect(adapterFor(cfg({ backend: 'sd-server', capabilities: ['image'], model: 'a' }), 'llama_sdcpp').lane).toBe(
      'image',
    );
    expect(
      adapterFor(cfg({ backend: 'whisper-server', capabilities: ['transcription'], model: 'a' }), 'llama_sdcpp').lane,
    ).toBe('whisper');
    expect(adapterFor(cfg({ backend: 'koboldcpp', model: 'a' }), 'kobold').lane).toBe('shared');
    expect(adapterFor(cfg({ backend: 'sim', capabilities: ['video'] }), 'llama_sdcpp')).toMatchObject({
      lane: 'image',
      shape: 'sd-server',
    });
    expect(adapterFor(cfg({ backend: 'sim', capabilities: ['transcription'] }), 'llama_sdcpp')).toMatchObject({
      lane: 'whisper',
      shape: 'whisper-server',
    });
    expect(adapterFor(cfg({ backend: 'sim', capabilities: ['image'] }), 'kobold')).toMatchObject({
      lane: 'shared',
      shape: 'koboldcpp',
      healthPath: '/api/extra/version',
    });
  });

  it('launches external engines from the default or the configured template', () => {
    const a = adapterFor(cfg({ backend: 'llama-server', model: 'a.gguf', contextsize: 2048 }), 'llama_sdcpp');
    expect(a.launch(cfg({ backend: 'llama-server', model: 'a.gguf', contextsize: 2048 }), ctx)).toEqual({
      command: 'llama-server',
      args: [
        '--host',
        '127.0.0.1',
        '--port',
        '9100',
        '-m',
        '/models/a.gguf',
        '--alias',
        'm-local',
        '-c',
        '2048',
        '-np',
        '1',
        '--metrics',
        '--slots',
        '--jinja',
      ],
      env: {},
    });
    const custom = cfg({
      backend: 'whisper-server',
      model: 'w.bin',
      command: 'whisper-server --port ${PORT} -m ${MODEL} -t 4',
      env: { OMP_NUM_THREADS: '4' },
    });
    expect(adapterFor(custom, 'llama_sdcpp').launch(custom, ctx)).toEqual({
      command: 'whisper-server',
      args: ['--port', '9100', '-m', '/models/w.bin', '-t', '4'],
      env: { OMP_NUM_THREADS: '4' },
    });
  });

  it('lets the node resolve the program a template names (the engines cache for a bare llama-server), and nothing else', () => {
    const resolveCommand = (word: string) => (word === 'llama-server' ? '/cache/llama-server' : word);
    const a = cfg({ backend: 'llama-server', model: 'a.gguf' });
    const spec = adapterFor(a, 'llama_sdcpp').launch(a, { ...ctx, resolveCommand });
    expect(spec.command).toBe('/cache/llama-server');
    expect(spec.args.slice(0, 2)).toEqual(['--host', '127.0.0.1']);
    const sim = cfg({ backend: 'sim' });
    expect(adapterFor(sim, 'llama_sdcpp').launch(sim, { ...ctx, resolveCommand }).command).toBe(ctx.cli.node);
  });

  it('llama-server by default: /metrics, /slots and jinja on; embeddings with mean pooling only for an embedding model', () => {
    const chat = cfg({ backend: 'llama-server', model: 'a.gguf' });
    const chatArgs = adapterFor(chat, 'llama_sdcpp').launch(chat, ctx).args;
    expect(chatArgs).toEqual(expect.arrayContaining(['--metrics', '--slots', '--jinja']));
    expect(chatArgs).not.toContain('--embeddings');
    const embed = cfg({ backend: 'llama-server', capabilities: ['text', 'embedding'], model: 'e.gguf' });
    const embedArgs = adapterFor(embed, 'llama_sdcpp').launch(embed, ctx).args;
    expect(embedArgs.slice(-6)).toEqual(['--metrics', '--slots', '--jinja', '--embeddings', '--pooling', 'mean']);
    // Only flags a current llama-server accepts (the reference capture was started with every one of them).
    const accepted = new Set([
      '--host',
      '--port',
      '-m',
      '--alias',
      '-c',
      '-np',
      '--metrics',
      '--slots',
      '--jinja',
      '--embeddings',
      '--pooling',
    ]);
    expect(embedArgs.filter((a) => a.startsWith('-')).filter((f) => !accepted.has(f))).toEqual([]);
    // A configured command replaces the default whole.
    const own = cfg({
      backend: 'llama-server',
      capabilities: ['embedding'],
      model: 'e.gguf',
      command: 'llama-server --port ${PORT} -m ${MODEL}',
    });
    expect(adapterFor(own, 'llama_sdcpp').launch(own, ctx).args).toEqual(['--port', '9100', '-m', '/models/e.gguf']);
  });

  it('tells a sim engine what its config says: vision from the multimodal capability, the context size, the image refusal', () => {
    const text = cfg({ backend: 'sim', contextsize: 2048, sim: { image_refusal: 400 } });
    const textArgs = adapterFor(text, 'llama_sdcpp').launch(text, ctx).args;
    expect(textArgs).not.toContain('--vision');
    expect(textArgs).toEqual(expect.arrayContaining(['--ctx', '2048', '--image-refusal', '400']));
    const vision = cfg({ backend: 'sim', capabilities: ['text', 'multimodal'] });
    expect(adapterFor(vision, 'llama_sdcpp').launch(vision, ctx).args).toContain('--vision');
  });

  it('an external engine without weights or command says so', () => {
    const c = cfg({ backend: 'sd-server', capabilities: ['image'] });
    expect(() => adapterFor(c, 'llama_sdcpp').launch(c, ctx)).toThrow(/needs `model`/);
  });

  it('runs the built-in engines through the router CLI, dying with their supervisor', () => {
    const sim = cfg({ backend: 'sim', sim: { load_time: '1s', fail: 'crash_on_start' } });
    const spec = adapterFor(sim, 'llama_sdcpp').launch(sim, ctx);
    expect(spec.command).toBe('/usr/bin/node');
    expect(spec.args.slice(0, 2)).toEqual(['/app/out/main/cli.js', 'sim-engine']);
    expect(spec.args).toEqual(
      expect.arrayContaining([
        '--shape',
        'llama-server',
        '--load-time',
        '1000',
        '--fail',
        'crash_on_start',
        '--exit-with-stdin',
      ]),
    );
    const llama = cfg({ backend: 'llama-node', model: 't.gguf', contextsize: 512, llama_node: { use_mmap: false } });
    const l = adapterFor(llama, 'llama_sdcpp').launch(llama, ctx);
    expect(l.args).toEqual(
      expect.arrayContaining([
        'llama-engine',
        '--model',
        '/models/t.gguf',
        '--ctx',
        '512',
        '--threads',
        '1',
        '--no-mmap',
      ]),
    );
  });
});
