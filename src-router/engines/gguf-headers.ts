import { basename } from 'node:path';
import { NotARegularFile, type OpenedFile, openRegularFile } from '../config/regular-file';
import type { GgufValue } from './llama-node/gguf-format';
import { type GgufHeader, GgufLimitExceeded, type GgufLimits, readGgufHeaderFrom } from './llama-node/gguf-reader';

/** Arrays longer than this are not kept in a summary (vocabularies, merges, scores): Ollama shows them as null. */
export const SHOWN_ARRAY_ITEMS = 16;
/** Header reads running at once on this node; more wait. */
export const GGUF_READS_AT_ONCE = 2;
/** Reads waiting for their turn; more are refused at once (`busy`), not queued. */
export const GGUF_READS_WAITING = 64;
/** Files whose summary (or error) is kept; the oldest goes first. */
const CACHED_FILES = 256;

const TOKENS_KEY = 'tokenizer.ggml.tokens';
/** The error of a file that is not a GGUF at all (a weights file of another format is no fault). */
export const NOT_A_GGUF = 'it is not a GGUF file';

/** What a header says, small enough to keep per file: long arrays are left out (their length kept). */
export interface GgufSummary {
  metadata: Map<string, GgufValue>;
  /** Keys of arrays left out, with their lengths. */
  omitted: Map<string, number>;
  /** Parameters counted from the tensor infos (general.parameter_count, where declared, says it first). */
  tensorParameters: number;
  /** The tensor type most of the weights are stored in (`Q8_0`); '' without tensors of a known type. */
  tensorType: string;
  /** The text of the end-of-sequence token, where the vocabulary has it. */
  eosText: string | null;
  fileSize: number;
  mtime: Date;
}

/**
 * A header that could not be read: `message` says why (without the path: callers name the file as they may),
 * `limit` which of the reader's limits it went past; `cached` when the same file version answers the same from now.
 */
export interface GgufReadError {
  error: string;
  limit?: keyof GgufLimits;
  cached: boolean;
}

export type GgufRead = { summary: GgufSummary } | GgufReadError;

/**
 * Every GGUF header this node reads (the Add model dialog's inspect, Ollama's tags, show and ps): at most
 * `GGUF_READS_AT_ONCE` at a time within `GGUF_LIMITS`, one read per file version (device, inode, size, mtime), its
 * summary or its error kept: a file past a limit is refused the same way on every request without being read again.
 */
export class GgufHeaders {
  private readonly cache = new Map<string, { identity: string; read: Promise<GgufRead> }>();
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly opts: {
      /** Called once per file version whose header cannot be read (the node logs it). */
      onError?: (path: string, message: string) => void;
      limits?: GgufLimits;
    } = {},
  ) {}

  /** The summary of `path`'s header, opening it here (symlinks followed; anything but a regular file refused). */
  async summary(path: string): Promise<GgufRead> {
    const file = await open(path);
    return 'error' in file ? file : this.summaryOf(file, path);
  }

  /** The summary of a file the caller opened (it is closed here); `path` names it. */
  async summaryOf(file: OpenedFile, path: string): Promise<GgufRead> {
    const identity = identityOf(file);
    const hit = this.cache.get(path);
    if (hit?.identity === identity) {
      await file.handle.close();
      return hit.read;
    }
    const read = this.read(file, path, {
      keepArray: (key, n) => n <= SHOWN_ARRAY_ITEMS || key === TOKENS_KEY,
    }).then((r) => ('error' in r ? r : { summary: summarize(r.header, r.file, SHOWN_ARRAY_ITEMS) }));
    this.cache.delete(path);
    this.cache.set(path, { identity, read });
    if (this.cache.size > CACHED_FILES) this.cache.delete(this.cache.keys().next().value as string);
    const r = await read;
    if ('error' in r) {
      if (!r.cached) this.cache.delete(path);
      else if (this.cache.get(path)?.read === read) this.opts.onError?.(path, r.error);
    }
    return r;
  }

  /** Every array in full (Ollama's `verbose`): read now, within the same limits and turns, not kept. */
  async full(path: string): Promise<GgufRead> {
    const file = await open(path);
    if ('error' in file) return file;
    const r = await this.read(file, path, {});
    return 'error' in r ? r : { summary: summarize(r.header, r.file, Infinity) };
  }

  private async read(
    file: OpenedFile,
    path: string,
    opts: { keepArray?: (key: string, n: number) => boolean },
  ): Promise<{ header: GgufHeader; file: OpenedFile } | GgufReadError> {
    try {
      if (this.running < GGUF_READS_AT_ONCE) this.running++;
      else {
        if (this.waiting.length >= GGUF_READS_WAITING)
          return {
            error: `${GGUF_READS_WAITING} GGUF headers are waiting to be read already: try again`,
            cached: false,
          };
        // The read that ends hands its turn over (`running` stays as it is).
        await new Promise<void>((resolve) => this.waiting.push(resolve));
      }
      try {
        return { header: await readGgufHeaderFrom(file.handle, path, { ...opts, limits: this.opts.limits }), file };
      } finally {
        const next = this.waiting.shift();
        if (next) next();
        else this.running--;
      }
    } catch (err) {
      return readError(err, path);
    } finally {
      await file.handle.close();
    }
  }
}

/** The name a client API may show for a model file (its folders are this node's business). */
export const fileName = (path: string) => basename(path);

async function open(path: string): Promise<OpenedFile | GgufReadError> {
  try {
    return await openRegularFile(path);
  } catch (err) {
    if (err instanceof NotARegularFile) return { error: `it is ${err.kind}, not a regular file`, cached: false };
    return {
      error: `it cannot be opened: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      cached: false,
    };
  }
}

function readError(err: unknown, path: string): GgufReadError {
  if (err instanceof GgufLimitExceeded)
    return { error: `its ${err.message.replace(/^the /, '')}`, limit: err.limit, cached: true };
  const message = (err as Error).message ?? String(err);
  if (/is not a GGUF file/.test(message)) return { error: NOT_A_GGUF, cached: true };
  return { error: `its GGUF header cannot be read: ${message.replaceAll(path, 'the file')}`, cached: true };
}

const identityOf = ({ stats }: OpenedFile) => `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeMs}`;

/** A header as a summary: arrays longer than `shown` left out, what the tensors say counted now. */
export function summarize(h: GgufHeader, file: OpenedFile, shown: number): GgufSummary {
  const metadata = new Map<string, GgufValue>();
  const omitted = new Map<string, number>();
  for (const [k, v] of h.metadata) {
    if (Array.isArray(v) && v.length > shown) omitted.set(k, v.length);
    else metadata.set(k, v);
  }
  const eos = h.metadata.get('tokenizer.ggml.eos_token_id');
  const tokens = h.metadata.get(TOKENS_KEY);
  const eosText =
    typeof eos === 'number' && Array.isArray(tokens) && typeof tokens[eos] === 'string' ? tokens[eos] : null;
  const bytes = new Map<string, number>();
  for (const t of h.tensors) if (t.typeName) bytes.set(t.typeName, (bytes.get(t.typeName) ?? 0) + (t.bytes ?? 0));
  const top = [...bytes.entries()].sort((a, b) => b[1] - a[1])[0];
  return {
    metadata,
    omitted,
    tensorParameters: h.tensors.reduce((sum, t) => sum + t.dims.reduce((a, b) => a * b, 1), 0),
    tensorType: top ? top[0].toUpperCase() : '',
    eosText,
    fileSize: file.stats.size,
    mtime: file.stats.mtime,
  };
}
