/**
 * The models folder while the node runs: configs created, replaced and removed through the console API or by hand
 * are taken in without a restart. The folder is watched (fs.watch, debounced) and rescanned periodically in case a
 * change event is missed; a file that does not parse (half-written, or edited into a mistake) keeps its last good
 * config in force and shows its error. Scans and API writes run one at a time.
 */
import { constants, existsSync, type FSWatcher, statSync, watch } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import type { Supervisor } from './backends';
import { ConfigError, type ModelConfig, type ModelConfigFile, parseModelConfig } from './config';
import { removeDurably, writeDurably } from './config/durable-file';
import {
  type ModelConfigIssue,
  type ModelConfigRead,
  ModelConfigReadCache,
  modelConfigYaml,
  modelFileStem,
  readModelConfigFolder,
} from './config/model-config-files';
import {
  type ModelConfigEntry,
  type ModelConfigList,
  type ModelConfigRemoved,
  type ModelConfigWritten,
  RouterError,
} from './contract';
import { adapterFor, type BackendMode } from './engines';
import { diffModelConfigs, type ModelRegistry } from './registry';
import type { ModelHashCache } from './store';

/** How long the folder must be quiet after a change event before it is read. */
const DEBOUNCE_MS = 150;
/** A file changed more recently than this may still be being written: it is read again once it has settled. */
const SETTLE_MS = 150;
/** The periodic rescan, for change events a filesystem does not deliver (network folders, some editors). */
const RESCAN_MS = 2_000;

export interface ModelConfigFolderDeps {
  dir: string;
  registry: ModelRegistry;
  supervisor: Supervisor;
  hashCache: ModelHashCache;
  mode: BackendMode;
  log: FastifyBaseLogger;
  /** The set of configs in force changed: the catalog, links and the master follow. */
  changed(): void;
  rescanMs?: number;
  /** The folder as start-up read it (`readModelConfigsAtStart`): its invalid files are logged and listed at once. */
  initial?: ModelConfigRead[];
  /** The parse cache start-up read the folder with. */
  cache?: ModelConfigReadCache;
}

type Json = Record<string, unknown>;

const fieldError = (status: number, code: string, issue: ModelConfigIssue) =>
  new RouterError(
    status,
    code,
    `config.${issue.path}: ${issue.message}`,
    'invalid_request_error',
    `config.${issue.path}`,
  );

/** Which folder is at `dir` now: its inode and birth time. */
function folderIdentity(dir: string): string {
  const st = statSync(dir);
  return `${st.ino}:${st.birthtimeMs}`;
}

/** How long a weights file's check may take (a network folder that hangs): the config is refused meanwhile. */
const WEIGHTS_CHECK_MS = 5_000;
/** Weights checks under way, by path: a path that hangs has one check outstanding, not one per rescan. */
const weightsChecks = new Map<string, Promise<ModelConfigIssue | null>>();

/** Whether a weights file is a regular file this node can read, asked off the event loop and bounded in time. */
function weightsIssue(path: string): Promise<ModelConfigIssue | null> {
  let check = weightsChecks.get(path);
  if (!check) {
    check = (async (): Promise<ModelConfigIssue | null> => {
      try {
        if (!(await stat(path)).isFile()) return { path: 'model', message: `${path} is not a regular file` };
        await access(path, constants.R_OK);
        return null;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        return {
          path: 'model',
          message: `${path} ${code === 'ENOENT' ? 'does not exist' : code === 'EACCES' ? 'cannot be read by this node (permission denied)' : (err as Error).message}`,
        };
      }
    })().finally(() => weightsChecks.delete(path));
    weightsChecks.set(path, check);
  }
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<ModelConfigIssue>((resolve) => {
    timer = setTimeout(
      () =>
        resolve({
          path: 'model',
          message: `${path} did not answer within ${WEIGHTS_CHECK_MS / 1000} s (a network folder that hangs?)`,
        }),
      WEIGHTS_CHECK_MS,
    );
    timer.unref();
  });
  return Promise.race([check, late]).finally(() => clearTimeout(timer));
}

/** What start-up would refuse in one model config beyond its schema: an engine it cannot launch, weights it cannot read. */
async function modelIssue(config: ModelConfig, mode: BackendMode): Promise<ModelConfigIssue | null> {
  try {
    adapterFor(config, mode);
  } catch (err) {
    return { path: /`model`/.test((err as Error).message) ? 'model' : 'backend', message: (err as Error).message };
  }
  return config.model ? weightsIssue(config.model) : null;
}

/** Marks, in place, what a folder read cannot serve beyond a file's own parse: a second file of one stem, a model issue. */
async function checkModelConfigs(read: ModelConfigRead[], mode: BackendMode): Promise<void> {
  const stems = new Set<string>();
  for (const r of read) {
    // Two files of one stem (a.yaml, a.yml) would share a local ID: the second is refused.
    if (stems.has(r.localId))
      Object.assign(r, {
        config: null,
        error: { path: '(file)', message: `another file of the models folder has the local ID '${r.localId}'` },
      });
    stems.add(r.localId);
  }
  await Promise.all(
    read.map(async (r) => {
      const issue = r.config ? await modelIssue(r.config, mode) : null;
      if (issue) Object.assign(r, { config: null, error: issue });
    }),
  );
}

/**
 * The models folder as start-up reads it: the configs it serves and every file as read. An invalid file is skipped
 * (listed with its error, not served), so a mistake made by hand never stops the node; a folder that cannot be read
 * does (ConfigError at `models.config_dir`).
 */
export async function readModelConfigsAtStart(
  dir: string,
  mode: BackendMode,
  cache?: ModelConfigReadCache,
): Promise<{ files: ModelConfigFile[]; read: ModelConfigRead[] }> {
  if (!dir) return { files: [], read: [] };
  let read: ModelConfigRead[];
  try {
    if (!statSync(dir).isDirectory()) throw new Error('not a directory');
    read = readModelConfigFolder(dir, cache);
  } catch (err) {
    throw new ConfigError(`models.config_dir ${dir}: ${(err as Error).message}`);
  }
  await checkModelConfigs(read, mode);
  return {
    files: read.flatMap((r) => (r.config ? [{ localId: r.localId, file: r.file, config: r.config }] : [])),
    read,
  };
}

export class ModelConfigFolder {
  private readonly inForce = new Map<string, ModelConfigFile>();
  private read: ModelConfigRead[] = [];
  private readonly cache: ModelConfigReadCache;
  /** Removals waiting for their running requests and engine. */
  private readonly removals = new Map<string, Promise<void>>();
  /** The error last logged per file, so a file that stays invalid is logged once. */
  private readonly reported = new Map<string, string>();
  private chain: Promise<unknown> = Promise.resolve();
  private watcher?: FSWatcher;
  /** The folder the watch was made on (inode and birth time: a folder made again may get the same inode). */
  private watchedIno?: string;
  private watching = false;
  private timer?: NodeJS.Timeout;
  private debounce?: NodeJS.Timeout;
  private stopped = false;

  constructor(private readonly deps: ModelConfigFolderDeps) {
    for (const r of deps.registry.all())
      this.inForce.set(r.localId, { localId: r.localId, file: r.file, config: r.config });
    this.read = deps.initial ?? [];
    this.cache = deps.cache ?? new ModelConfigReadCache();
    for (const r of this.read) this.report(r);
  }

  start(): void {
    const { dir } = this.deps;
    if (!dir) return;
    this.watch();
    this.timer = setInterval(() => void this.rescan(), this.deps.rescanMs ?? RESCAN_MS);
    this.timer.unref();
    void this.rescan();
  }

  /**
   * Watches the models folder as it is now. A watch follows the folder it was made on: a folder deleted and made
   * again (or replaced) is watched anew when a scan finds another one at the path.
   */
  private watch(): void {
    const { dir } = this.deps;
    this.watcher?.close();
    this.watcher = undefined;
    this.watching = true;
    try {
      // A folder that cannot be watched is not tried again until another folder is at the path.
      this.watchedIno = folderIdentity(dir);
      this.watcher = watch(dir, { persistent: false }, () => this.soon());
      this.watcher.on('error', (err) =>
        this.deps.log.warn(`models folder watch failed (the periodic rescan goes on): ${err.message}`),
      );
    } catch (err) {
      this.deps.log.warn(
        `cannot watch the models folder ${dir} (the periodic rescan goes on): ${(err as Error).message}`,
      );
    }
  }

  stop(): void {
    this.stopped = true;
    this.watcher?.close();
    clearInterval(this.timer);
    clearTimeout(this.debounce);
  }

  private soon(): void {
    clearTimeout(this.debounce);
    this.debounce = setTimeout(() => void this.rescan(), DEBOUNCE_MS);
    this.debounce.unref();
  }

  /** One at a time: scans and API writes. */
  private serial<T>(fn: () => Promise<T> | T): Promise<T> {
    const run = this.chain.then(fn, fn);
    this.chain = run.catch(() => undefined);
    return run;
  }

  /** Reads the folder and takes in what changed. */
  rescan(): Promise<void> {
    return this.serial(() => this.scan());
  }

  /** `written`: a file the API has just written whole (renamed into place), taken in without waiting for it to settle. */
  private async scan(written?: string): Promise<void> {
    const { dir, log } = this.deps;
    if (!dir || this.stopped) return;
    let read: ModelConfigRead[];
    try {
      read = readModelConfigFolder(dir, this.cache);
    } catch (err) {
      if (this.reported.get(dir) !== (err as Error).message)
        log.warn(`models folder ${dir} cannot be read: ${(err as Error).message}`);
      this.reported.set(dir, (err as Error).message);
      return;
    }
    this.reported.delete(dir);
    if (this.watching) {
      let ino: string | undefined;
      try {
        ino = folderIdentity(dir);
      } catch {
        /* gone again: the next scan sees it */
      }
      if (ino !== undefined && ino !== this.watchedIno) this.watch();
    }
    await checkModelConfigs(read, this.deps.mode);
    if (this.stopped) return;
    this.read = read;
    // A file written a moment ago by someone else may be half-written: it changes nothing until it has settled.
    const now = Date.now();
    // (A modification time ahead of this clock, a network folder's, counts as settled: it would never settle otherwise.)
    const young = new Set(
      read
        .filter((r) => r.file !== written && now - r.mtimeMs >= 0 && now - r.mtimeMs < SETTLE_MS)
        .map((r) => r.localId),
    );
    if (young.size) this.soon();
    for (const r of read) if (!young.has(r.localId)) this.report(r);
    const settled = read.flatMap((r) => {
      if (!young.has(r.localId)) return [{ localId: r.localId, file: r.file, config: r.config }];
      const kept = this.inForce.get(r.localId);
      return kept ? [kept] : [];
    });
    const diff = diffModelConfigs(this.inForce, settled);
    let changed = false;
    for (const f of [...diff.added, ...diff.changed]) {
      // The same local ID still being removed comes back once its engine has stopped.
      if (this.removals.has(f.localId)) continue;
      const modelHash = await this.hashOf(f);
      // A node torn down meanwhile (a Settings restart) takes nothing in.
      if (this.stopped) return;
      const was = this.inForce.get(f.localId);
      this.deps.registry.upsert(f, modelHash);
      const sup = { localId: f.localId, publicId: f.config.name, config: f.config };
      if (was) this.deps.supervisor.updateModel(sup);
      else this.deps.supervisor.addModel(sup);
      this.inForce.set(f.localId, f);
      changed = true;
      log.info(
        { modelConfig: f.localId, file: f.file, model: f.config.name, event: was ? 'replaced' : 'added' },
        `model config ${was ? 'replaced' : 'taken in'}: ${f.file} (model '${f.config.name}')`,
      );
    }
    for (const localId of diff.removed) {
      const was = this.inForce.get(localId)!;
      this.inForce.delete(localId);
      this.deps.registry.remove(localId);
      changed = true;
      log.info(
        { modelConfig: localId, file: was.file, model: was.config.name, event: 'removed' },
        `model config removed: ${was.file} (model '${was.config.name}'); its engine stops once its running requests end`,
      );
      const done = this.deps.supervisor
        .removeModel(localId)
        .then(() =>
          log.info(
            { modelConfig: localId, event: 'engine_stopped' },
            `model '${was.config.name}' removed: its requests ended and its engine stopped`,
          ),
        )
        .catch((err: Error) =>
          log.error(
            { modelConfig: localId },
            `stopping the engine of removed model '${was.config.name}' failed: ${err.message}`,
          ),
        )
        .finally(() => {
          this.removals.delete(localId);
          this.soon();
        });
      this.removals.set(localId, done);
    }
    if (changed) this.deps.changed();
  }

  /** A file's error is logged when it appears or changes; its last good config stays in force meanwhile. */
  private report(r: ModelConfigRead): void {
    const before = this.reported.get(r.file);
    if (!r.error) {
      if (before !== undefined) this.reported.delete(r.file);
      return;
    }
    const text = `${r.error.path}: ${r.error.message}`;
    if (before === text) return;
    this.reported.set(r.file, text);
    const kept = this.inForce.has(r.localId);
    this.deps.log.warn(
      { modelConfig: r.localId, file: r.file, path: r.error.path, event: 'refused' },
      `model config ${r.file} refused at ${text}${kept ? ' (its last good config stays in force)' : ''}`,
    );
  }

  private async hashOf(f: ModelConfigFile): Promise<string | null> {
    if (!f.config.model) return null;
    try {
      return await this.deps.hashCache.hash(f.config.model);
    } catch (err) {
      this.deps.log.warn({ model: f.localId }, `cannot hash weights ${f.config.model}: ${(err as Error).message}`);
      return null;
    }
  }

  /** The folder as last read, each file with its error and the config in force for it. */
  list(): ModelConfigList {
    const configs: ModelConfigEntry[] = this.read.map((r) => ({
      name: typeof r.raw?.name === 'string' && r.raw.name ? r.raw.name : r.localId,
      file: r.file,
      config: r.raw,
      error: r.error,
      in_force: this.inForce.get(r.localId)?.file === r.file ? (this.inForce.get(r.localId)!.config as Json) : null,
    }));
    return { config_dir: this.deps.dir, configs };
  }

  /** Lists after a fresh read, so an answer reflects the folder now. */
  async current(): Promise<ModelConfigList> {
    await this.rescan();
    return this.list();
  }

  private folder(): string {
    if (!this.deps.dir)
      throw new RouterError(
        409,
        'no_models_folder',
        'this node has no models folder (models.config_dir): set one in Settings first',
      );
    return this.deps.dir;
  }

  /** Validates a config body as start-up would, for the file `file`; a 400 names the first bad field. */
  private async validate(raw: Json, file: string): Promise<ModelConfig> {
    let config: ModelConfig;
    try {
      config = parseModelConfig(raw, file, this.deps.dir);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      throw fieldError(400, 'invalid_config', err.issues[0] ?? { path: '(root)', message: err.message });
    }
    const issue = await modelIssue(config, this.deps.mode);
    if (issue) throw fieldError(400, issue.path === 'model' ? 'model_not_readable' : 'invalid_config', issue);
    return config;
  }

  /** The file named `name` in the API: its local ID (file stem) first, else the one file whose config has that name. */
  private find(name: string): ModelConfigRead {
    const byStem = this.read.find((r) => r.localId === name);
    if (byStem) return byStem;
    const byName = this.read.filter((r) => r.raw?.name === name);
    if (byName.length === 1) return byName[0];
    if (byName.length > 1)
      throw new RouterError(
        409,
        'model_config_ambiguous',
        `${byName.length} files configure the model '${name}' (${byName.map((r) => r.localId).join(', ')}): name one by its file`,
        'invalid_request_error',
        'name',
      );
    throw new RouterError(
      404,
      'model_config_not_found',
      `no model config '${name}' in ${this.deps.dir}`,
      'invalid_request_error',
      'name',
    );
  }

  /**
   * Another file that has the model name `name`, or whose stem is `name`: the API finds a file by its stem first, so a
   * model named after another file's stem could not be edited or removed by its name.
   */
  private nameTaken(name: string, except?: string): ModelConfigRead | undefined {
    return this.read.find(
      (r) =>
        r.localId !== except &&
        (r.localId === name || r.raw?.name === name || this.inForce.get(r.localId)?.config.name === name),
    );
  }

  /** Writes a new config file `<dir>/<stem of its name>.yaml` and takes it in. */
  create(raw: Json): Promise<ModelConfigWritten> {
    return this.serial(async () => {
      const dir = this.folder();
      await this.scan();
      const name = typeof raw.name === 'string' ? raw.name : '';
      const stem = name ? modelFileStem(name) : null;
      if (name && !stem)
        throw fieldError(400, 'invalid_config', {
          path: 'name',
          message: 'a model name with a path separator, ".." or NUL cannot name a file',
        });
      const file = join(dir, `${stem ?? 'model'}.yaml`);
      const config = await this.validate(raw, file);
      const taken = this.nameTaken(config.name);
      if (taken)
        throw new RouterError(
          409,
          'model_config_exists',
          `a config of the model '${config.name}', or a file of that name, exists: ${taken.file}`,
          'invalid_request_error',
          'config.name',
        );
      if (this.read.some((r) => r.localId === stem) || existsSync(file) || existsSync(join(dir, `${stem}.yml`))) {
        throw new RouterError(
          409,
          'model_config_exists',
          `the file ${file} exists`,
          'invalid_request_error',
          'config.name',
        );
      }
      writeDurably(file, modelConfigYaml(raw));
      this.deps.log.info({ modelConfig: stem, file }, `model config written from the console: ${file}`);
      await this.scan(file);
      return { name: config.name, file, config: raw };
    });
  }

  /** Replaces the config of the file named `name`; its file stays (a new model name must be free). */
  replace(name: string, raw: Json): Promise<ModelConfigWritten> {
    return this.serial(async () => {
      this.folder();
      await this.scan();
      const entry = this.find(name);
      const config = await this.validate(raw, entry.file);
      const taken = this.nameTaken(config.name, entry.localId);
      const own = entry.raw?.name === config.name || this.inForce.get(entry.localId)?.config.name === config.name;
      if (taken && !own)
        throw new RouterError(
          409,
          'model_config_exists',
          `a config of the model '${config.name}', or a file of that name, exists: ${taken.file}`,
          'invalid_request_error',
          'config.name',
        );
      writeDurably(entry.file, modelConfigYaml(raw));
      this.deps.log.info(
        { modelConfig: entry.localId, file: entry.file },
        `model config replaced from the console: ${entry.file}`,
      );
      await this.scan(entry.file);
      return { name: config.name, file: entry.file, config: raw };
    });
  }

  /** Removes the file named `name`; resolves once the model's running requests ended and its engine stopped. */
  async remove(name: string): Promise<ModelConfigRemoved> {
    const { localId, shown } = await this.serial(async () => {
      this.folder();
      await this.scan();
      const entry = this.find(name);
      removeDurably(entry.file);
      this.deps.log.info(
        { modelConfig: entry.localId, file: entry.file },
        `model config removed from the console: ${entry.file}`,
      );
      await this.scan();
      return { localId: entry.localId, shown: typeof entry.raw?.name === 'string' ? entry.raw.name : entry.localId };
    });
    await this.removals.get(localId);
    return { name: shown, removed: true };
  }
}
