import { createServer } from 'node:net';
import { isDeepStrictEqual } from 'node:util';
import { loadNodeConfig, type NodeConfig } from './config';
import { type BootIssue, bootIssues } from './config/boot-checks';
import { restoreConfigBackup } from './config/settings-file';
import { consoleAccessDir, removeAccessRecord, writeAccessRecord } from './console-access';
import { ConsoleCodes } from './http';
import { type MovedNotice, startMovedNotice } from './http/moved-notice';
import { createNode, type NodeOptions, type RouterNode } from './node';
import { storeLockHolder } from './store';

export interface NodeHostOptions
  extends Omit<NodeOptions, 'configFile' | 'settings' | 'consoleToken' | 'consoleCodes'> {
  configFile: string;
  /** Adjusts a loaded config before the node starts (a command-line port, a busy port given up). */
  prepare?(config: NodeConfig): NodeConfig | Promise<NodeConfig>;
  /** A restart brought up a new node (the desktop window reloads its URL). */
  onRestart?(node: RouterNode): void;
  log?(message: string): void;
}

/**
 * Runs the router node of one config file and restarts it in-process when the Settings screen wrote a new config.
 * The console token stays the same across restarts (a generated one too), and a port of 0 keeps the
 * port the node had, so the console that asked for the restart finds the node again. Before a config is written the
 * Settings route asks `bootIssues` what would stop it; a config that still cannot start is reported, the file before it
 * is put back from `<file>.bak`, and the node comes back on that config, on the same port.
 *
 * Each start writes the owner-only access record `routerdesk console-link` reads (`console-access.ts`); a clean stop
 * removes it. A restart onto another port leaves a redirect at the old address for a while (`startMovedNotice`), so
 * the console that asked for the move finds the node again.
 */
export class NodeHost {
  private node!: RouterNode;
  private config!: NodeConfig;
  private consoleToken: string | undefined;
  private readonly consoleCodes = new ConsoleCodes();
  private restarting: Promise<RouterNode> | null = null;
  private restartError: string | null = null;
  private restoredFrom: string | null = null;
  private closed = false;
  private moved: MovedNotice | null = null;

  private constructor(private readonly opts: NodeHostOptions) {}

  static async start(opts: NodeHostOptions): Promise<NodeHost> {
    const host = new NodeHost(opts);
    const config = await host.prepared(loadNodeConfig(opts.configFile));
    await host.boot(config);
    return host;
  }

  get current(): RouterNode {
    return this.node;
  }

  /** Why the last restart could not use the new config (null when it could). */
  lastRestartError(): string | null {
    return this.restartError;
  }

  /** After a restart that could not use the new config: the file the previous one was put back from (`<file>.bak`). */
  lastRestoredFrom(): string | null {
    return this.restoredFrom;
  }

  /**
   * What would stop `config` from starting in place of the running node, by config field: its folders and files, its
   * listen address (the running node's own port counts as free), a store another live process holds.
   */
  async bootIssues(config: NodeConfig): Promise<BootIssue[]> {
    const port = Number(new URL(this.node.url).port) || this.config.server.port;
    const issues = await bootIssues(config, { host: this.config.server.host, port });
    const holder = storeLockHolder(config.cluster.store_dir);
    if (holder !== null)
      issues.push({
        path: 'cluster.store_dir',
        message: `the store ${config.cluster.store_dir} is in use by another routerdesk process (PID ${holder})`,
      });
    return issues;
  }

  /** Closes the node and starts it again from the config file. */
  restart(): Promise<RouterNode> {
    this.restarting ??= this.doRestart().finally(() => {
      this.restarting = null;
    });
    return this.restarting;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.restarting?.catch(() => undefined);
    await this.moved?.close();
    await this.node.close();
    removeAccessRecord(consoleAccessDir(this.config.cluster.store_dir));
  }

  private async doRestart(): Promise<RouterNode> {
    const previous = this.config;
    const previousUrl = this.node.url;
    const port = Number(new URL(this.node.url).port) || previous.server.port;
    await this.node.close();
    if (this.closed) return this.node;
    try {
      const next = await this.prepared(loadNodeConfig(this.opts.configFile));
      if (next.server.port === 0) next.server.port = port;
      await this.boot(next);
      this.restartError = null;
      this.restoredFrom = null;
    } catch (err) {
      this.restartError = (err as Error).message;
      // The file goes back to what the node runs on, so the next start of the process does not fail the same way.
      this.restoredFrom = restoreConfigBackup(this.opts.configFile) ? `${this.opts.configFile}.bak` : null;
      this.opts.log?.(
        `the new config could not start (${this.restartError}); back on the previous one${this.restoredFrom ? `, restored from ${this.restoredFrom}` : ''}`,
      );
      if (previous.server.port === 0) previous.server.port = port;
      await this.boot(previous);
    }
    await this.moved?.close();
    this.moved = null;
    if (this.node.url !== previousUrl) this.moved = await startMovedNotice(previous.server.host, port, this.node.url);
    this.opts.onRestart?.(this.node);
    return this.node;
  }

  private async prepared(config: NodeConfig): Promise<NodeConfig> {
    return this.opts.prepare ? this.opts.prepare(config) : config;
  }

  private async boot(config: NodeConfig): Promise<void> {
    const { prepare: _p, onRestart: _o, log: _l, ...nodeOptions } = this.opts;
    // A code was issued with a token the node took then: a new console token or a changed operators list (Settings)
    // ends every code before the node listens again, so the holder of a withdrawn token cannot turn one into the
    // console token of the new run.
    const tokenChanged =
      this.consoleToken !== undefined && (config.console.token || this.consoleToken) !== this.consoleToken;
    if (tokenChanged || (this.config && !isDeepStrictEqual(config.console.operators, this.config.console.operators)))
      this.consoleCodes.clear();
    this.node = await createNode(config, {
      ...nodeOptions,
      consoleToken: this.consoleToken,
      consoleCodes: this.consoleCodes,
      settings: {
        file: this.opts.configFile,
        restart: () =>
          void this.restart().catch((err: Error) =>
            this.opts.log?.(`the node could not start again, not even on its previous config: ${err.message}`),
          ),
        lastRestartError: () => this.restartError,
        lastRestoredFrom: () => this.restoredFrom,
        bootIssues: (config) => this.bootIssues(config),
      },
    });
    if (this.config && this.config.cluster.store_dir !== config.cluster.store_dir)
      removeAccessRecord(consoleAccessDir(this.config.cluster.store_dir));
    this.config = config;
    this.consoleToken = this.node.consoleToken;
    try {
      writeAccessRecord(consoleAccessDir(config.cluster.store_dir), {
        url: this.node.url,
        pid: process.pid,
        token: this.node.consoleToken,
      });
    } catch (err) {
      this.opts.log?.(`routerdesk console-link will not find this node: ${(err as Error).message}`);
    }
  }
}

/** A `prepare` step: a configured port another process holds is given up for a free one (said through `note`). */
export function busyPortFallback(note: (message: string) => void) {
  return async (config: NodeConfig): Promise<NodeConfig> => {
    if (config.server.port && !(await portFree(config.server.host, config.server.port))) {
      note(`port ${config.server.port} is in use: serving on a free port instead`);
      config.server.port = 0;
    }
    return config;
  };
}

function portFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, host, () => srv.close(() => resolve(true)));
  });
}
