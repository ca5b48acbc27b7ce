/**
 * The models folder read while the node runs: every config file with its parsed config or its error (a file being
 * written, or edited into a mistake, is reported, not fatal), bounded reads, and the file name a new config gets.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { parseDocument, stringify } from 'yaml';
import { ConfigError, MODEL_CONFIG_FILE, parseModelConfig } from './load';
import type { ModelConfig } from './model-config';

/** The largest model config file read (a config is a few hundred bytes). */
export const MODEL_CONFIG_MAX_BYTES = 256 * 1024;
/** Aliases a YAML document may expand: a config needs none, and a few thousand already blow up (billion laughs). */
const YAML_MAX_ALIASES = 50;

export interface ModelConfigIssue {
  /** The config field (`contextsize`, `sim.load_time`), `(yaml)` for a syntax error, `(file)` for a read error. */
  path: string;
  message: string;
}

/** One file of the models folder as read now. */
export interface ModelConfigRead {
  localId: string;
  file: string;
  /** The file's mapping as written; null when it is no YAML mapping. */
  raw: Record<string, unknown> | null;
  config: ModelConfig | null;
  error: ModelConfigIssue | null;
  /** When the file was last modified (epoch ms; 0 when it cannot be read). */
  mtimeMs: number;
}

/** Parses one config file's text: its mapping and parsed config, or the first problem by field path. */
export function parseModelConfigText(text: string, file: string): Pick<ModelConfigRead, 'raw' | 'config' | 'error'> {
  const doc = parseDocument(text, { prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length)
    return { raw: null, config: null, error: { path: '(yaml)', message: `not valid YAML: ${doc.errors[0].message}` } };
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: YAML_MAX_ALIASES });
  } catch (err) {
    return { raw: null, config: null, error: { path: '(yaml)', message: (err as Error).message } };
  }
  if (!value || typeof value !== 'object' || Array.isArray(value))
    return {
      raw: null,
      config: null,
      error: { path: '(root)', message: 'a model config is a YAML mapping (name: …, backend: …)' },
    };
  const raw = value as Record<string, unknown>;
  try {
    return { raw, config: parseModelConfig(raw, file, dirname(file)), error: null };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return { raw, config: null, error: err.issues[0] ?? { path: '(root)', message: err.message } };
  }
}

/**
 * What was parsed of each file, by the file's identity (modification and change time, size, inode): a rescan parses
 * only the files that changed since, so its cost is one stat per file. Files no longer listed leave it.
 */
export class ModelConfigReadCache {
  private readonly byFile = new Map<
    string,
    { key: string; parsed: Pick<ModelConfigRead, 'raw' | 'config' | 'error'> }
  >();

  get size(): number {
    return this.byFile.size;
  }

  get(file: string, key: string): Pick<ModelConfigRead, 'raw' | 'config' | 'error'> | undefined {
    const hit = this.byFile.get(file);
    return hit?.key === key ? hit.parsed : undefined;
  }

  set(file: string, key: string, parsed: Pick<ModelConfigRead, 'raw' | 'config' | 'error'>): void {
    this.byFile.set(file, { key, parsed });
  }

  /** Keeps only the entries of `files`. */
  keep(files: ReadonlySet<string>): void {
    for (const f of this.byFile.keys()) if (!files.has(f)) this.byFile.delete(f);
  }
}

/** Reads one config file: a regular file of bounded size (a FIFO would block the read, a device never end it). */
export function readModelConfigFile(file: string, cache?: ModelConfigReadCache): ModelConfigRead {
  const localId = basename(file, extname(file));
  let text: string;
  let mtimeMs = 0;
  let key = '';
  try {
    const st = statSync(file);
    mtimeMs = st.mtimeMs;
    if (!st.isFile()) throw new Error('not a regular file');
    if (st.size > MODEL_CONFIG_MAX_BYTES) throw new Error(`larger than ${MODEL_CONFIG_MAX_BYTES / 1024} KiB`);
    key = `${st.mtimeMs}:${st.ctimeMs}:${st.size}:${st.ino}`;
    const hit = cache?.get(file, key);
    if (hit) return { localId, file, ...hit, mtimeMs };
    text = readFileSync(file, 'utf8');
  } catch (err) {
    return {
      localId,
      file,
      raw: null,
      config: null,
      error: { path: '(file)', message: `cannot read ${file}: ${(err as Error).message}` },
      mtimeMs,
    };
  }
  const parsed = parseModelConfigText(text, file);
  cache?.set(file, key, parsed);
  return { localId, file, ...parsed, mtimeMs };
}

/**
 * Every model config file of `dir`, in name order, each parsed or with its error (a new object each call, its parsed
 * config from `cache` when the file did not change); a folder that cannot be listed throws.
 */
export function readModelConfigFolder(dir: string, cache?: ModelConfigReadCache): ModelConfigRead[] {
  const files = readdirSync(dir)
    .filter((n) => MODEL_CONFIG_FILE.test(n))
    .sort()
    .map((n) => join(dir, n));
  cache?.keep(new Set(files));
  return files.map((f) => readModelConfigFile(f, cache));
}

/**
 * The file stem a config of model name `name` gets: letters, digits, `.`, `_` and `-` kept, anything else a `-`, at
 * most 100 characters, no leading dot. A name with a path separator, `..` or NUL is refused (null), as is one that
 * leaves nothing.
 */
export function modelFileStem(name: string): string | null {
  if (/[/\\\u0000]/.test(name) || name.includes('..')) return null;
  const stem = name
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[.-]+/, '')
    .slice(0, 100)
    .replace(/[.-]+$/, '');
  return stem ? stem : null;
}

/** The YAML text a config is written as. */
export const modelConfigYaml = (raw: Record<string, unknown>): string =>
  `# Routerdesk model config (written by the Models screen)\n${stringify(raw)}`;
