import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configDocsMarkdown } from '../../src-router/config/config-docs';

// The documents a newcomer reads: short enough to read, every relative link leads somewhere, the configuration
// reference is the one the schemas generate, and source comments cite requirements, never the issue tracker.

const ROOT = new URL('../..', import.meta.url).pathname;
const SKIP = new Set([
  'node_modules',
  'out',
  'dist',
  '.git',
  '.routerdesk',
  '.routerdesk-demo',
  'test-results',
  'playwright-report',
]);

function walk(dir: string, keep: (file: string) => boolean): string[] {
  const found: string[] = [];
  for (const name of readdirSync(dir)) {
    if (SKIP.has(name)) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) found.push(...walk(path, keep));
    else if (keep(path)) found.push(path);
  }
  return found;
}

const chars = (file: string) => Array.from(readFileSync(join(ROOT, file), 'utf8')).length;

/** Markdown without fenced code blocks and inline code, where a bracket is not a link. */
function prose(md: string): string {
  return md.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to dashes; repeats get -1, -2, … */
function anchors(md: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const line of md.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').split('\n')) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = m[1]
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    result.add(n ? `${base}-${n}` : base);
  }
  return result;
}

/** Every relative link target of a Markdown file: inline links and images, and reference definitions. */
function links(md: string): string[] {
  const text = prose(md);
  const targets: string[] = [];
  for (const m of text.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(m[1]);
  for (const m of text.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/gm)) targets.push(m[1]);
  return targets.filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t));
}

describe('documentation', () => {
  const markdown = walk(ROOT, (f) => f.endsWith('.md'));

  it('ARCHITECTURE.md is a map: at most 12,000 characters', () => {
    expect(chars('ARCHITECTURE.md')).toBeLessThanOrEqual(12_000);
  });

  it('README.md is the first ten minutes: at most 15,000 characters', () => {
    expect(chars('README.md')).toBeLessThanOrEqual(15_000);
  });

  it('finds the Markdown files it checks', () => {
    const names = markdown.map((f) => relative(ROOT, f));
    expect(names).toEqual(expect.arrayContaining(['README.md', 'ARCHITECTURE.md', 'docs/config.md']));
  });

  it('every relative link in every Markdown file resolves, anchors included', () => {
    const broken: string[] = [];
    for (const file of markdown) {
      const md = readFileSync(file, 'utf8');
      for (const target of links(md)) {
        const [path, anchor] = target.split('#', 2) as [string, string | undefined];
        const dest = path ? resolve(dirname(file), decodeURIComponent(path)) : file;
        const where = `${relative(ROOT, file)} → ${target}`;
        if (!existsSync(dest)) {
          broken.push(`${where}: no such file`);
          continue;
        }
        if (anchor && dest.endsWith('.md') && !anchors(readFileSync(dest, 'utf8')).has(anchor))
          broken.push(`${where}: no such heading`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('docs/config.md is the reference the schemas generate (run `node out/main/cli.js schema` after a change)', () => {
    expect(readFileSync(join(ROOT, 'docs', 'config.md'), 'utf8')).toBe(configDocsMarkdown());
  });

  it('every config key has a description', () => {
    const rows = configDocsMarkdown()
      .split('\n')
      .filter((l) => l.startsWith('| `'));
    const bare = rows.filter((l) => l.split(' | ')[3].trim() === '').map((l) => l.split(' | ')[0]);
    expect(rows.length).toBeGreaterThan(50);
    expect(bare).toEqual([]);
  });

  it('source files name no issue numbers (history belongs in git log; requirement ids stay)', () => {
    const sources = ['src-main', 'src-renderer', 'src-router'].flatMap((d) =>
      walk(join(ROOT, d), (f) => /\.(ts|tsx|css|html|mjs|js)$/.test(f)),
    );
    expect(sources.length).toBeGreaterThan(100);
    const hits = sources.flatMap((f) =>
      readFileSync(f, 'utf8')
        .split('\n')
        .flatMap((line, i) => (/issue #\d/i.test(line) ? [`${relative(ROOT, f)}:${i + 1}`] : [])),
    );
    expect(hits).toEqual([]);
  });
});
