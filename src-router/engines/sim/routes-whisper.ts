import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { SimEngineContext } from './context';
import { sendError } from './errors';
import { type Job, readHooks, runJob, work } from './job';
import { audioSeconds } from './wav';

export interface MultipartForm {
  file?: Buffer;
  filename?: string;
  fields: Record<string, string>;
}

/** Reads a whole multipart form: the `file` part into memory, every other field as a string. */
export async function readMultipart(request: FastifyRequest): Promise<MultipartForm | undefined> {
  if (!request.isMultipart()) return undefined;
  const form: MultipartForm = { fields: {} };
  for await (const part of request.parts()) {
    if (part.type === 'file') {
      const bytes = await part.toBuffer();
      if (part.fieldname === 'file') {
        form.file = bytes;
        form.filename = part.filename;
      }
    } else {
      form.fields[part.fieldname] = String(part.value);
    }
  }
  return form;
}

interface Word {
  word: string;
  start: number;
  end: number;
  t_dtw: number;
  probability: number;
}

export interface Transcript {
  text: string;
  /** whisper.cpp names the language in full (`english`), as OpenAI's verbose_json does. */
  language: string;
  duration: number;
  segments: {
    id: number;
    text: string;
    start: number;
    end: number;
    tokens: number[];
    words: Word[];
    temperature: number;
    avg_logprob: number;
    no_speech_prob: number;
  }[];
}

/** The languages a client names most, by code; any other code is kept as it came. */
const LANGUAGE_NAMES: Record<string, string> = {
  en: 'english',
  de: 'german',
  fr: 'french',
  es: 'spanish',
  it: 'italian',
  nl: 'dutch',
  pt: 'portuguese',
  ja: 'japanese',
  zh: 'chinese',
};

const SEGMENT_SECONDS = 10;

/** A deterministic transcript: one sentence per 10 s of audio. */
export function makeTranscript(seconds: number, language: string | undefined, temperature: number): Transcript {
  const segments: Transcript['segments'] = [];
  for (let start = 0, id = 0; start < seconds || id === 0; start += SEGMENT_SECONDS, id++) {
    const end = Math.min(seconds, start + SEGMENT_SECONDS);
    const text = ` Simulated speech from ${start.toFixed(1)} to ${end.toFixed(1)} seconds.`;
    const words = [{ word: text.trim(), start, end, t_dtw: -1, probability: 0.9 }];
    segments.push({ id, text, start, end, tokens: [], words, temperature, avg_logprob: -0.1, no_speech_prob: 0.01 });
  }
  const code = language && language !== 'auto' ? language : 'en';
  return {
    text: segments
      .map((s) => s.text)
      .join('')
      .trim(),
    language: LANGUAGE_NAMES[code] ?? code,
    duration: seconds,
    segments,
  };
}

/** Spends seconds × audio_time_per_second (scaled) and returns the transcript. */
export async function transcribe(
  ctx: SimEngineContext,
  job: Job,
  audio: Buffer,
  fields: Record<string, string>,
): Promise<Transcript> {
  const seconds = audioSeconds(audio);
  await work(job, ctx.scaled(seconds * ctx.options.audio_time_per_second));
  const temperature = Number(fields.temperature ?? 0);
  return makeTranscript(seconds, fields.language, Number.isFinite(temperature) ? temperature : 0);
}

/** Answers in `response_format`: json (default and unknown), verbose_json or text. */
export function sendTranscript(reply: FastifyReply, t: Transcript, format: string | undefined): void {
  if (format === 'text') {
    reply.type('text/plain; charset=utf-8').send(`${t.text}\n`);
  } else if (format === 'verbose_json') {
    // whisper-server adds what it detected: the language (its code), how sure it is, and every language's probability.
    const detected = Object.entries(LANGUAGE_NAMES).find(([, name]) => name === t.language)?.[0] ?? t.language;
    reply.send({
      task: 'transcribe',
      language: t.language,
      duration: t.duration,
      text: t.text,
      segments: t.segments,
      detected_language: t.language,
      detected_language_probability: 0.9,
      language_probabilities: { [detected]: 0.9 },
    });
  } else {
    reply.send({ text: t.text });
  }
}

/** whisper-server (whisper.cpp): POST /inference, multipart `file`, `response_format`, `language`, `temperature`. */
export function registerWhisperRoutes(app: FastifyInstance, ctx: SimEngineContext): void {
  app.post('/inference', async (request, reply) => {
    const form = await readMultipart(request);
    // whisper-server's error handler answers every 400 with this text, whatever the handler said.
    if (!form?.file) return reply.code(400).type('text/plain').send('Invalid request');
    const audio = form.file;
    return runJob(ctx, request, reply, {
      hooks: readHooks(form.fields),
      run: async (job) =>
        sendTranscript(reply, await transcribe(ctx, job, audio, form.fields), form.fields.response_format),
    });
  });
}

/** The OpenAI shape (KoboldCpp): POST /v1/audio/transcriptions, multipart `file`, `model`, `response_format`. */
export function registerOpenAITranscriptionRoute(app: FastifyInstance, ctx: SimEngineContext): void {
  app.post('/v1/audio/transcriptions', async (request, reply) => {
    const form = await readMultipart(request);
    if (!form?.file) return sendError(reply, 400, "'file' is required (multipart/form-data)");
    const audio = form.file;
    return runJob(ctx, request, reply, {
      hooks: readHooks(form.fields),
      run: async (job) =>
        sendTranscript(reply, await transcribe(ctx, job, audio, form.fields), form.fields.response_format),
    });
  });
}
