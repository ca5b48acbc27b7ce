import type { EngineLease } from '../backends';
import type { EngineRoute } from '../engines';

/** A request body for an engine: JSON, or a transcription upload. */
export type EngineBody = { json: Record<string, unknown> } | { upload: TranscriptionUpload };

export interface TranscriptionUpload {
  file: Uint8Array;
  filename: string;
  mimetype: string;
  fields: Record<string, string>;
}

/** Calls the engine behind a lease; the signal cancels the request at the engine. */
export async function callEngine(lease: EngineLease, route: EngineRoute, body: EngineBody, signal: AbortSignal): Promise<Response> {
  const url = `http://${lease.host}:${lease.port}${route.path}`;
  if ('json' in body) {
    return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body.json), signal });
  }
  const form = new FormData();
  const { upload } = body;
  for (const [k, v] of Object.entries(upload.fields)) form.append(k, v);
  form.append('file', new Blob([upload.file], { type: upload.mimetype || 'application/octet-stream' }), upload.filename || 'audio.wav');
  return fetch(url, { method: 'POST', body: form, signal });
}
