import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type ModelConfigFile, parseModelConfig } from '../../src-router/config';
import {
  MODEL_CONFIG_MAX_BYTES,
  ModelConfigReadCache,
  modelConfigYaml,
  modelFileStem,
  parseModelConfigText,
  readModelConfigFolder,
} from '../../src-router/config/model-config-files';
import { diffModelConfigs } from '../../src-router/registry';

describe('model config file names', () => {
  it('keeps safe characters and turns others into dashes', () => {
    expect(modelFileStem('llama3')).toBe('llama3');
    expect(modelFileStem('qwen2.5:7b-instruct')).toBe('qwen2.5-7b-instruct');
    expect(modelFileStem('My Model (Q4_K_M)')).toBe('My-Model-Q4_K_M');
    expect(modelFileStem('.hidden')).toBe('hidden');
    expect(modelFileStem('x'.repeat(300))).toHaveLength(100);
    expect(modelFileStem('ünïcode')).toBe('n-code');
  });

  it('refuses path separators, dot-dot, NUL and names that leave nothing', () => {
    for (const name of ['../x', 'a/b', 'a\\b', '..', 'a..b', 'x\u0000y', '...', '---', '::', ''])
      expect(modelFileStem(name), JSON.stringify(name)).toBeNull();
  });
});

describe('model config text', () => {
  const file = '/models/m.yaml';

  it('parses a config, with relative weights read from its folder', () => {
    const r = parseModelConfigText('name: m\nbackend: sim\nmodel: w.gguf\n', file);
    expect(r.error).toBeNull();
    expect(r.raw).toEqual({ name: 'm', backend: 'sim', model: 'w.gguf' });
    expect(r.config).toMatchObject({ name: 'm', backend: 'sim', model: '/models/w.gguf', capabilities: ['text'] });
  });

  it('names the first bad field by its path, keeping the mapping as written', () => {
    expect(parseModelConfigText('name: m\nbackend: sim\ncontextsize: -1\n', file)).toMatchObject({
      raw: { contextsize: -1 },
      config: null,
      error: { path: 'contextsize' },
    });
    expect(parseModelConfigText('name: m\nbackend: sim\nsim: { load_time: soon }\n', file).error?.path).toBe(
      'sim.load_time',
    );
    expect(parseModelConfigText('name: m\nbackend: nope\n', file).error?.path).toBe('backend');
  });

  it('reports YAML that does not parse (a half-written file), a duplicate key and a non-mapping', () => {
    expect(parseModelConfigText('name: m\nbackend: [sim\n', file)).toMatchObject({
      raw: null,
      config: null,
      error: { path: '(yaml)' },
    });
    expect(parseModelConfigText('name: m\nname: n\nbackend: sim\n', file).error?.path).toBe('(yaml)');
    expect(parseModelConfigText('- a\n- b\n', file).error?.path).toBe('(root)');
    expect(parseModelConfigText('', file).error?.path).toBe('(root)');
  });

  it('refuses a YAML bomb (aliases of aliases) instead of expanding it', () => {
    const lines = ['a: &a [x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 10; i++)
      lines.push(
        `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9)
          .fill(`*${String.fromCharCode(96 + i)}`)
          .join(', ')}]`,
      );
    const r = parseModelConfigText(`${lines.join('\n')}\nname: m\nbackend: sim\n`, file);
    expect(r.error?.path).toBe('(yaml)');
    expect(r.raw).toBeNull();
  });

  it('writes YAML that reads back as the same mapping', () => {
    const raw = { name: 'm', backend: 'sim', env: { A: 'b: c' }, sim: { load_time: '1s' } };
    expect(parseModelConfigText(modelConfigYaml(raw), file).raw).toEqual(raw);
  });
});

describe('the models folder as read', () => {
  const dir = mkdtempSync(join(tmpdir(), 'routerdesk-model-folder-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads every config file in name order with its error; an oversized file is not read', () => {
    writeFileSync(join(dir, 'b.yaml'), 'name: b\nbackend: sim\n');
    writeFileSync(join(dir, 'a.yml'), 'name: a\nbackend: sim\ncontextsize: x\n');
    writeFileSync(join(dir, 'c.yaml'), `name: c\nbackend: sim\n#${'x'.repeat(MODEL_CONFIG_MAX_BYTES)}\n`);
    writeFileSync(join(dir, 'b.yaml.tmp-1-abc'), 'half');
    writeFileSync(join(dir, 'notes.txt'), 'not a config');
    const read = readModelConfigFolder(dir);
    expect(read.map((r) => [r.localId, r.error?.path ?? null])).toEqual([
      ['a', 'contextsize'],
      ['b', null],
      ['c', '(file)'],
    ]);
  });

  it('issue #28: a rescan of a large folder parses only the files that changed since the last read (the cost of a rescan is a stat per file)', () => {
    const big = mkdtempSync(join(tmpdir(), 'routerdesk-model-folder-big-'));
    try {
      for (let i = 0; i < 2_000; i++)
        writeFileSync(join(big, `m${String(i).padStart(4, '0')}.yaml`), `name: m${i}\nbackend: sim\n`);
      const cache = new ModelConfigReadCache();
      const first = readModelConfigFolder(big, cache);
      expect(first).toHaveLength(2_000);
      const again = readModelConfigFolder(big, cache);
      // The parsed config of an unchanged file is the one read before (not parsed again), each read a fresh entry.
      expect(again.every((r, i) => r.config === first[i].config && r !== first[i])).toBe(true);
      writeFileSync(join(big, 'm0007.yaml'), 'name: m7\nbackend: sim\ncontextsize: 1024\n');
      const changed = readModelConfigFolder(big, cache);
      expect(changed[7].config).not.toBe(first[7].config);
      expect(changed[7].config?.contextsize).toBe(1024);
      expect(changed[8].config).toBe(first[8].config);
      // A file removed leaves the cache.
      rmSync(join(big, 'm0009.yaml'));
      expect(readModelConfigFolder(big, cache)).toHaveLength(1_999);
      expect(cache.size).toBe(1_999);
    } finally {
      rmSync(big, { recursive: true, force: true });
    }
  });
});

describe('diff of the configs in force and the folder as read', () => {
  const cfg = (name: string, extra: Record<string, unknown> = {}) =>
    parseModelConfig({ name, backend: 'sim', ...extra }, 'x', '/m');
  const inForce = new Map<string, ModelConfigFile>([
    ['a', { localId: 'a', file: '/m/a.yaml', config: cfg('a') }],
    ['b', { localId: 'b', file: '/m/b.yaml', config: cfg('b') }],
    ['c', { localId: 'c', file: '/m/c.yaml', config: cfg('c') }],
  ]);

  it('finds added, changed and removed configs, and keeps the last good one of an invalid file', () => {
    const diff = diffModelConfigs(inForce, [
      { localId: 'a', file: '/m/a.yaml', config: cfg('a') },
      { localId: 'b', file: '/m/b.yaml', config: cfg('b', { contextsize: 512 }) },
      { localId: 'c', file: '/m/c.yaml', config: null },
      { localId: 'd', file: '/m/d.yaml', config: cfg('d') },
      { localId: 'e', file: '/m/e.yaml', config: null },
    ]);
    expect(diff.added.map((f) => f.localId)).toEqual(['d']);
    expect(diff.changed.map((f) => [f.localId, f.config.contextsize])).toEqual([['b', 512]]);
    expect(diff.removed).toEqual([]);
    expect(diff.kept).toEqual(['c']);
  });

  it('a file gone removes its config; the same folder again changes nothing', () => {
    expect(diffModelConfigs(inForce, [{ localId: 'a', file: '/m/a.yaml', config: cfg('a') }]).removed).toEqual([
      'b',
      'c',
    ]);
    const same = diffModelConfigs(inForce, [...inForce.values()]);
    expect([same.added, same.changed, same.removed, same.kept]).toEqual([[], [], [], []]);
  });

  it('a weights path or a file moved to another extension is a change', () => {
    const diff = diffModelConfigs(inForce, [
      { localId: 'a', file: '/m/a.yml', config: cfg('a') },
      { localId: 'b', file: '/m/b.yaml', config: cfg('b', { model: 'w.gguf' }) },
      { localId: 'c', file: '/m/c.yaml', config: cfg('c') },
    ]);
    expect(diff.changed.map((f) => f.localId)).toEqual(['a', 'b']);
  });
});
