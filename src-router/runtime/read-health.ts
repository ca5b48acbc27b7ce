import type { KeySpace } from '../kv';
import { RUNTIME_BLOB_KEY, runtimeBlobSchema, type RuntimeHealth } from './blob';

/**
 * What `runtime.health` answers (RT-1): the runtime blob and nothing else. Absent → `{ published: false }`;
 * unreadable JSON, a blob that fails the schema, or a keyspace that cannot answer → `{ published: false, reason }`.
 * Never throws. The blob is returned as parsed: absent fields stay absent (RT-2).
 */
export async function readRuntimeHealth(ks: KeySpace, key = RUNTIME_BLOB_KEY): Promise<RuntimeHealth> {
  let raw: string | null;
  try {
    raw = await ks.get(key);
  } catch (err) {
    return { published: false, reason: `keyspace unavailable: ${err instanceof Error ? err.message : String(err)}` };
  }
  if (raw === null) return { published: false };
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (err) {
    return { published: false, reason: `runtime blob is not valid JSON: ${err instanceof Error ? err.message : String(err)}` };
  }
  const parsed = runtimeBlobSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? issue.path.join('.') : '(root)';
    return { published: false, reason: `runtime blob does not match the schema at ${where}: ${issue?.message ?? 'invalid'}` };
  }
  return { published: true, blob: parsed.data };
}
