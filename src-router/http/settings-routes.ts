import { isDeepStrictEqual } from 'node:util';
import type { FastifyInstance } from 'fastify';
import type { BootIssue } from '../config/boot-checks';
import { configJsonSchemas } from '../config/json-schema';
import type { NodeConfig } from '../config/node-config';
import {
  ConfigError,
  maskSecrets,
  readConfigFile,
  unmaskSecrets,
  validateConfig,
  writeConfigFile,
} from '../config/settings-file';
import { RouterError, type SettingsAnswer, type SettingsView, settingsPutSchema } from '../contract';
import { requireOperator, requireToken } from './auth';
import { PRINTED_CODE_TTL_MS } from './console-codes';
import type { HttpDeps } from './deps';
import { parseBody } from './errors';

/** The node config's JSON Schema, generated from the zod schema once (it never changes while the node runs). */
let schemaOnce: Record<string, unknown> | undefined;
const nodeConfigSchema = () =>
  (schemaOnce ??= configJsonSchemas()['node-config.schema.json'] as Record<string, unknown>);

/** What a node started by a host that can restart it knows of its config file (`NodeHost`). */
export interface SettingsHost {
  file: string;
  /** Restarts the node on the config file (called once the answer is sent). */
  restart(): void;
  lastRestartError(): string | null;
  /** After a restart that fell back: the file the previous config was put back from. */
  lastRestoredFrom(): string | null;
  /** What would stop this config from starting, by config field (checked before it is written). */
  bootIssues(config: NodeConfig): Promise<BootIssue[]>;
}

/**
 * The node's Settings, operator token only: read the config (secrets masked) with its JSON Schema and
 * file; write a whole config validated as start-up validates it and checked for what its start needs (folders,
 * files, the port: a 400 names the field path and nothing is written), atomically with the old file kept as `.bak`,
 * then restart the node in-process on it. A restart that still fails puts the `.bak` back; the GET then says why.
 */
export async function settingsRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  const host = (): SettingsHost => {
    if (!deps.settings)
      throw new RouterError(
        409,
        'settings_unavailable',
        'this node was started without a config file it can rewrite and restart on (routerdesk node --config, serve or the desktop app can)',
      );
    return deps.settings;
  };
  app.register(async (scope) => {
    scope.addHook('onRequest', requireToken([deps.consoleToken, ...deps.operators], 'console'));
    scope.addHook('preHandler', async (request) => {
      requireOperator(deps, request, 'read or change the node settings');
    });

    scope.get('/router/v1/console/settings', async (): Promise<SettingsView> => {
      const { file, lastRestartError, lastRestoredFrom } = host();
      return {
        config: maskSecrets(readConfigFile(file)),
        schema: nodeConfigSchema(),
        path: file,
        restartError: lastRestartError(),
        restoredFrom: lastRestoredFrom(),
      };
    });

    scope.put('/router/v1/console/settings', async (request, reply): Promise<SettingsAnswer> => {
      const settings = host();
      const current = readConfigFile(settings.file);
      const sent = parseBody(settingsPutSchema, request.body).config;
      let raw;
      let config;
      try {
        raw = unmaskSecrets(sent, current);
        config = validateConfig(raw, settings.file);
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        const first = err.issues[0];
        throw new RouterError(
          400,
          'invalid_config',
          first ? `config.${first.path}: ${first.message}` : err.message,
          'invalid_request_error',
          first ? `config.${first.path}` : 'config',
        );
      }
      const port = config.server.port || Number(new URL(deps.selfUrl()).port);
      const url = `http://${config.server.host === '0.0.0.0' || config.server.host === '::' ? '127.0.0.1' : config.server.host}:${port}`;
      if (isDeepStrictEqual(raw, current))
        return { written: false, restarted: false, url: deps.selfUrl(), path: settings.file };
      const [issue] = await settings.bootIssues(config);
      if (issue)
        throw new RouterError(
          400,
          'config_cannot_start',
          `config.${issue.path}: ${issue.message}`,
          'invalid_request_error',
          `config.${issue.path}`,
        );
      writeConfigFile(settings.file, raw);
      request.log.info({ file: settings.file }, 'node config written from the Settings screen; restarting');
      reply.raw.once('finish', () => setImmediate(() => settings.restart()));
      // A node that moves: the console follows it with a one-time code (the new address is another origin, where
      // this page's token is not kept); kept through the restart even when this save changes the console token.
      const moved = new URL(url).origin !== new URL(deps.selfUrl()).origin;
      return {
        written: true,
        restarted: true,
        url,
        path: settings.file,
        ...(moved ? { code: deps.consoleCodes.issue(PRINTED_CODE_TTL_MS, { keep: true }) } : {}),
      };
    });
  });
}
