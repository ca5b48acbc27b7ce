import type { FastifyInstance } from 'fastify';
import {
  type ModelConfigList,
  type ModelConfigRemoved,
  type ModelConfigWritten,
  modelConfigWriteSchema,
} from '../contract';
import { requireOperator, requireToken } from './auth';
import type { HttpDeps } from './deps';
import { parseBody } from './errors';

/** The models folder of this node as the console API edits it (`node-model-configs`' `ModelConfigFolder`). */
export interface ModelConfigsHost {
  current(): Promise<ModelConfigList>;
  create(config: Record<string, unknown>): Promise<ModelConfigWritten>;
  replace(name: string, config: Record<string, unknown>): Promise<ModelConfigWritten>;
  remove(name: string): Promise<ModelConfigRemoved>;
}

/** A model config is a few hundred bytes: a body beyond this is refused unread (413). */
const MODEL_CONFIG_BODY_LIMIT = 64 * 1024;

/**
 * The model configs of this node's models folder, operator token only (configs name files and carry engine
 * environments): list them with their errors and the config in force, create, replace and remove one. Bodies are
 * validated as start-up validates a model config (a 400 names the field path, nothing is written); writes are durable
 * and taken in at once, without a restart; a DELETE answers once the model's running requests ended and its engine
 * stopped. `:name` only selects among the folder's files (a file stem or a config's name), never a path.
 */
export async function modelConfigRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  app.register(async (scope) => {
    scope.addHook('onRequest', requireToken([deps.consoleToken, ...deps.operators], 'console'));
    scope.addHook('preHandler', async (request) => {
      requireOperator(deps, request, "read or change this node's model configs");
    });

    scope.get('/router/v1/console/model-configs', async (): Promise<ModelConfigList> => deps.modelConfigs.current());

    scope.post('/router/v1/console/model-configs', { bodyLimit: MODEL_CONFIG_BODY_LIMIT }, async (request, reply) => {
      const { config } = parseBody(modelConfigWriteSchema, request.body);
      return reply.status(201).send(await deps.modelConfigs.create(config));
    });

    scope.put<{ Params: { name: string } }>(
      '/router/v1/console/model-configs/:name',
      { bodyLimit: MODEL_CONFIG_BODY_LIMIT },
      async (request): Promise<ModelConfigWritten> => {
        const { config } = parseBody(modelConfigWriteSchema, request.body);
        return deps.modelConfigs.replace(request.params.name, config);
      },
    );

    scope.delete<{ Params: { name: string } }>(
      '/router/v1/console/model-configs/:name',
      async (request): Promise<ModelConfigRemoved> => deps.modelConfigs.remove(request.params.name),
    );
  });
}
