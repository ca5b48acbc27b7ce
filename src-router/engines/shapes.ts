import type { Endpoint, EngineRoute, EngineShape } from './types';

const OPENAI_TEXT: Partial<Record<Endpoint, EngineRoute>> = {
  chat: { kind: 'openai-json', path: '/v1/chat/completions' },
  completion: { kind: 'openai-json', path: '/v1/completions' },
  embedding: { kind: 'openai-json', path: '/v1/embeddings' },
};

/** Health path and routes per HTTP shape. The sim engine speaks every shape, so these are tested against it. */
export const SHAPES: Record<EngineShape, { healthPath: string; routes: Partial<Record<Endpoint, EngineRoute>> }> = {
  'llama-server': { healthPath: '/health', routes: OPENAI_TEXT },
  vllm: { healthPath: '/health', routes: OPENAI_TEXT },
  'sd-server': {
    healthPath: '/health',
    routes: { image: { kind: 'openai-json', path: '/v1/images/generations' } },
  },
  'whisper-server': {
    healthPath: '/health',
    routes: { transcription: { kind: 'multipart-transcription', path: '/inference', responseFormat: 'verbose_json' } },
  },
  koboldcpp: {
    healthPath: '/api/extra/version',
    routes: {
      ...OPENAI_TEXT,
      image: { kind: 'kobold-txt2img', path: '/sdapi/v1/txt2img' },
      transcription: {
        kind: 'multipart-transcription',
        path: '/v1/audio/transcriptions',
        responseFormat: 'verbose_json',
      },
    },
  },
};
