import type { FastifyInstance } from 'fastify';
import {
  MODEL_FILE_INSPECT_PATH,
  MODEL_FILES_PATH,
  type ModelFileInspection,
  type ModelFileList,
  modelFileInspectRequestSchema,
  RouterError,
} from '../contract';
import { ggufFacts, suggestedCapabilities } from '../engines/gguf-inspect';
import { requireOperator, requireToken } from './auth';
import type { HttpDeps } from './deps';
import { parseBody } from './errors';

/**
 * The Add model dialog's file browser, operators only: list a folder inside the folders the node may read, and read
 * a GGUF file's header there (architecture, context length, embedding or projector, a projector beside it). Paths
 * are checked by their real path against those folders (`ModelFileRoots`); a path outside is a 403 naming them.
 */
export async function modelFileRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  app.register(async (scope) => {
    scope.addHook('onRequest', requireToken([deps.consoleToken, ...deps.operators], 'console'));
    scope.addHook('preHandler', async (request) => {
      requireOperator(deps, request, 'browse or inspect model files');
    });

    scope.get<{ Querystring: { dir?: unknown } }>(MODEL_FILES_PATH, async (request): Promise<ModelFileList> => {
      const dir = request.query.dir;
      if (dir !== undefined && typeof dir !== 'string')
        throw new RouterError(400, 'invalid_path', 'dir: give one folder path', 'invalid_request_error', 'dir');
      return deps.modelFileRoots.list(dir);
    });

    scope.post(MODEL_FILE_INSPECT_PATH, { bodyLimit: 16 * 1024 }, async (request): Promise<ModelFileInspection> => {
      const { path } = parseBody(modelFileInspectRequestSchema, request.body);
      // Opened once and checked as opened (a regular file inside the folders), then read through that handle only.
      const { real, file } = await deps.modelFileRoots.openFile(path, 'path');
      const read = await deps.ggufHeaders.summaryOf(file, real);
      if ('error' in read) {
        if (!read.cached)
          throw new RouterError(503, 'gguf_reads_busy', `path: '${path}': ${read.error}`, 'server_error', 'path');
        throw new RouterError(
          400,
          read.limit ? 'gguf_header_too_large' : 'not_a_gguf_file',
          `path: '${path}': ${read.error}`,
          'invalid_request_error',
          'path',
        );
      }
      const facts = ggufFacts(read.summary.metadata);
      const size = read.summary.fileSize;
      const beside = facts.projector ? [] : await deps.modelFileRoots.projectorsBeside(real);
      request.log.info({ path: real, architecture: facts.architecture }, 'model file inspected');
      return {
        path: real,
        size,
        architecture: facts.architecture,
        name: facts.name,
        context_length: facts.contextLength,
        embedding: facts.embedding,
        vision_projector: facts.projector ? real : (beside[0] ?? null),
        capabilities: suggestedCapabilities(facts, beside.length > 0),
      };
    });
  });
}
