import type { Capability } from '../config';
import type { Endpoint } from '../engines';

/** Which capabilities let a model answer an endpoint. */
export const ENDPOINT_CAPABILITIES: Record<Endpoint, Capability[]> = {
  chat: ['text', 'multimodal', 'speech', 'music'],
  completion: ['text', 'multimodal', 'speech', 'music'],
  embedding: ['embedding', 'text'],
  image: ['image', 'video'],
  transcription: ['transcription'],
};

export const canServe = (capabilities: readonly string[], endpoint: Endpoint) =>
  ENDPOINT_CAPABILITIES[endpoint].some((c) => capabilities.includes(c));
