import type { FastifyInstance } from 'fastify';
import type { SimEngineContext } from './context';
import { sendError } from './errors';
import { seedOf } from './generation';
import { type Job, readHooks, runJob, work } from './job';
import { encodePng, parseImageSize } from './png';

type Body = Record<string, unknown>;

export interface ImageRequest {
  prompt: string;
  width: number;
  height: number;
  steps: number;
  n: number;
}

const MAX_IMAGES = 8;
const MAX_STEPS = 1000;

function intIn(value: unknown, fallback: number, min: number, max: number): number | undefined {
  if (value === undefined || value === null) return fallback;
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof n === 'number' && Number.isInteger(n) && n >= min && n <= max ? n : undefined;
}

/** Draws `n` images one after another, each taking steps × step_time (scaled). Returns base64 PNGs. */
export async function generateImages(ctx: SimEngineContext, job: Job, req: ImageRequest): Promise<string[]> {
  const images: string[] = [];
  const perImage = ctx.scaled(req.steps * ctx.options.step_time);
  for (let i = 0; i < req.n; i++) {
    await work(job, perImage);
    images.push(encodePng(req.width, req.height, seedOf(`${req.prompt}#${i}`)).toString('base64'));
  }
  return images;
}

/** Reads an image request; a string is the 400 message. */
export function readImageRequest(body: Body, sizeFrom: 'size' | 'width-height'): ImageRequest | string {
  const prompt = typeof body.prompt === 'string' ? body.prompt : '';
  let width: number | undefined;
  let height: number | undefined;
  if (sizeFrom === 'size') {
    const size = parseImageSize(body.size);
    if (!size) return `'size' must be "WxH" with sides 1..4096, got ${JSON.stringify(body.size)}`;
    ({ width, height } = size);
  } else {
    width = intIn(body.width, 512, 1, 4096);
    height = intIn(body.height, 512, 1, 4096);
    if (width === undefined || height === undefined) return "'width' and 'height' must be integers 1..4096";
  }
  const steps = intIn(body.steps ?? body.sample_steps, 20, 1, MAX_STEPS);
  if (steps === undefined) return `'steps' must be an integer 1..${MAX_STEPS}`;
  const n = intIn(body.n ?? body.batch_count, 1, 1, MAX_IMAGES);
  if (n === undefined) return `'n' must be an integer 1..${MAX_IMAGES}`;
  return { prompt, width, height, steps, n };
}

/** sd-server: POST /v1/images/generations → { created, data: [{ b64_json }] }. */
export function registerSdRoutes(app: FastifyInstance, ctx: SimEngineContext): void {
  app.post('/v1/images/generations', async (request, reply) => {
    const body = (request.body ?? {}) as Body;
    const parsed = readImageRequest(body, 'size');
    if (typeof parsed === 'string') return sendError(reply, 400, parsed);
    return runJob(ctx, request, reply, {
      hooks: readHooks(body),
      run: async (job) => {
        const images = await generateImages(ctx, job, parsed);
        reply.send({ created: Math.floor(Date.now() / 1000), data: images.map((b64_json) => ({ b64_json })) });
      },
    });
  });
}
