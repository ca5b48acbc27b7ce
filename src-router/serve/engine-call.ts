import type { EngineLease } from '../backends';
import { fetchAnswer } from '../backends/answer-limits';
import type { CallEnd } from '../backends/call-end';
import { type HttpAnswer, postJson } from '../backends/http-call';
import type { EngineRoute } from '../engines';

/** A request body for an engine: JSON (an object, or its text as it is to be sent), or a transcription upload. */
export type EngineBody = { json: Record<string, unknown> } | { text: string } | { upload: TranscriptionUpload };

export interface TranscriptionUpload {
  file: Uint8Array;
  filename: string;
  mimetype: string;
  fields: Record<string, string>;
}

/** Calls the engine behind a lease; the call's end cancels the request at the engine. */
export async function callEngine(
  lease: EngineLease,
  route: EngineRoute,
  body: EngineBody,
  end: CallEnd,
): Promise<HttpAnswer> {
  const url = `http://${lease.host}:${lease.port}${route.path}`;
  if ('json' in body) return postJson(url, body.json, end);
  if ('text' in body) return postJson(url, body.text, end);
  const form = new FormData();
  const { upload } = body;
  for (const [k, v] of Object.entries(upload.fields)) form.append(k, v);
  form.append(
    'file',
    new Blob([upload.file], { type: upload.mimetype || 'application/octet-stream' }),
    upload.filename || 'audio.wav',
  );
  return fetchAnswer(await fetch(url, { method: 'POST', body: form, signal: end.toSignal() }));
}
