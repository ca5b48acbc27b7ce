import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

// design.md §2: a module imports only modules above it in this list (ARCHITECTURE.md keeps the same list).
export const LAYERS = [
  'contract',
  'config',
  'store',
  'kv',
  'engines',
  'backends',
  'registry',
  'costs',
  'queue',
  'lending',
  'routing',
  'runtime',
  'cluster',
  'guardian',
  'serve',
  'http',
  'bench',
  'cli',
];
const TOP_FILES: Record<string, number> = {
  'version.ts': 0.5,
  'debian-tool.ts': 0.5,
  'proc-stat.ts': 0.5,
  'seeded-random.ts': 0.5,
  'paths.ts': 4.5,
  'console-access.ts': LAYERS.indexOf('config') + 0.5,
  'node-routing.ts': LAYERS.indexOf('serve') + 0.5,
  'node-runtime.ts': LAYERS.indexOf('serve') + 0.5,
  'node-lending.ts': LAYERS.indexOf('serve') + 0.5,
  'node-guardians.ts': LAYERS.indexOf('serve') + 0.5,
  'node-model-configs.ts': LAYERS.indexOf('serve') + 0.5,
  'node.ts': LAYERS.indexOf('http') + 0.5,
  'node-host.ts': LAYERS.indexOf('http') + 0.75,
  'cli.ts': LAYERS.indexOf('cli'),
};

const SRC = join(new URL('../..', import.meta.url).pathname, 'src-router');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : /\.tsx?$/.test(n) && !n.endsWith('.d.ts') ? [p] : [];
  });
}

/** Rank of a file inside src-router: its module's place in the list (top-level files have their own). */
function rank(file: string): number {
  const rel = relative(SRC, file).split(sep);
  if (rel.length === 1) {
    if (!(rel[0] in TOP_FILES)) throw new Error(`top-level file ${rel[0]} has no place in the layer list`);
    return TOP_FILES[rel[0]];
  }
  const i = LAYERS.indexOf(rel[0]);
  if (i < 0)
    throw new Error(`module folder ${rel[0]} is not in the layer list (add it to design order and ARCHITECTURE.md)`);
  return i;
}

export function importsOf(source: string): string[] {
  const out: string[] = [];
  for (const m of source.matchAll(
    /(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|^import\s+['"]([^'"]+)['"]/gm,
  ))
    out.push(m[1] ?? m[2] ?? m[3]);
  return out;
}

describe('module import direction (design.md §2)', () => {
  const all = files(SRC);

  it('finds the modules', () => {
    expect(all.length).toBeGreaterThan(20);
  });

  it('every import goes to the same module or one above it', () => {
    const violations: string[] = [];
    for (const file of all) {
      const from = rank(file);
      for (const spec of importsOf(readFileSync(file, 'utf8'))) {
        if (!spec.startsWith('.')) continue;
        const target = join(file, '..', spec);
        if (!target.startsWith(SRC + sep)) continue; // package.json and the like
        const to = rank(statSafe(target));
        if (to > from)
          violations.push(
            `${relative(SRC, file)} imports ${spec} (${LAYERS[Math.floor(to)] ?? 'node'} is below ${LAYERS[Math.floor(from)] ?? 'top'})`,
          );
      }
    }
    expect(violations).toEqual([]);
  });

  it('contract imports nothing from Node or other modules (the renderer imports it)', () => {
    for (const file of all.filter((f) => relative(SRC, f).startsWith(`contract${sep}`))) {
      for (const spec of importsOf(readFileSync(file, 'utf8')))
        expect(spec === 'zod' || spec.startsWith('./'), `${file}: ${spec}`).toBe(true);
    }
  });

  it('the renderer never imports Node code or router modules other than contract', () => {
    const rendererDir = join(SRC, '..', 'src-renderer');
    for (const file of files(rendererDir)) {
      for (const spec of importsOf(readFileSync(file, 'utf8'))) {
        expect(spec.startsWith('node:'), `${file}: ${spec}`).toBe(false);
        if (spec.includes('src-router')) expect(spec, file).toMatch(/src-router\/contract(\/|$)/);
      }
    }
  });

  it('the checker itself catches a wrong-way import', () => {
    expect(importsOf(`import { x } from '../http';\nexport * from './a';\nconst m = await import('../node');`)).toEqual(
      ['../http', './a', '../node'],
    );
    expect(rank(join(SRC, 'config', 'x.ts'))).toBeLessThan(rank(join(SRC, 'http', 'y.ts')));
  });
});

function statSafe(target: string): string {
  for (const candidate of [target, `${target}.ts`, `${target}.tsx`, join(target, 'index.ts')]) {
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      /* next */
    }
  }
  return target;
}
