import { type KeySpace, KeySpaceValueTooLarge } from '../kv';
import { RUNTIME_BLOB_KEY, type RuntimeHealth, runtimeBlobReadSchema, runtimeBlobSchema } from './blob';

/**
 * What `runtime.health` answers (RT-1): the runtime blob and nothing else. Absent → `{ published: false }`;
 * unreadable JSON, a blob that is not an object, one over the keyspace's value bound (not read), or a keyspace that
 * cannot answer → `{ published: false, reason }`.
 * Never throws. The blob is returned as parsed: absent fields stay absent, and a malformed field is dropped and
 * named in `malformed` while the rest still shows (RT-2).
 */
export async function readRuntimeHealth(ks: KeySpace, key = RUNTIME_BLOB_KEY): Promise<RuntimeHealth> {
  let raw: string | null;
  try {
    raw = await ks.get(key);
  } catch (err) {
    if (err instanceof KeySpaceValueTooLarge)
      return { published: false, reason: `runtime blob not read: ${err.message}` };
    return { published: false, reason: `keyspace unavailable: ${err instanceof Error ? err.message : String(err)}` };
  }
  if (raw === null) return { published: false };
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (err) {
    return {
      published: false,
      reason: `runtime blob is not valid JSON: ${err instanceof Error ? err.message : String(err)}`,
    };
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    return { published: false, reason: 'runtime blob is not a JSON object' };
  const checked = runtimeBlobSchema.safeParse(json);
  const blob = runtimeBlobReadSchema.parse(json);
  if (checked.success) return { published: true, blob };
  const malformed = [...new Set(checked.error.issues.map((i) => (i.path.length ? i.path.join('.') : '(root)')))];
  return { published: true, blob, malformed };
}
