import type { FastifyInstance } from 'fastify';
import type { SimEngineContext } from './context';
import { sendError } from './errors';
import { readHooks, runJob } from './job';
import { generateImages, readImageRequest } from './routes-sd';

export const KOBOLD_VERSION = '1.80.sim';

/** KoboldCpp's own API: model name, version/capabilities (its health check), and the A1111 txt2img route. */
export function registerKoboldRoutes(app: FastifyInstance, ctx: SimEngineContext): void {
  app.get('/api/v1/model', async () => ({ result: ctx.modelId }));

  app.get('/api/extra/version', async () => ({
    result: 'KoboldCpp',
    version: KOBOLD_VERSION,
    txt2img: true,
    transcribe: true,
    embeddings: true,
  }));

  app.post('/sdapi/v1/txt2img', async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const parsed = readImageRequest({ ...body, n: 1 }, 'width-height');
    if (typeof parsed === 'string') return sendError(reply, 400, parsed);
    return runJob(ctx, request, reply, {
      hooks: readHooks(body),
      run: async (job) => {
        const images = await generateImages(ctx, job, parsed);
        const { prompt, width, height, steps } = parsed;
        reply.send({ images, parameters: { prompt, width, height, steps }, info: '' });
      },
    });
  });
}
