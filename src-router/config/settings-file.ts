/**
 * The node config as the Settings screen edits it (issue #13): the YAML's own shape as JSON with secrets masked, the
 * same validation as start-up (zod schema, role checks: a 400 names the field path), and an atomic write that keeps
 * the previous file as `.bak`.
 */
import { copyFileSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parse as parseYaml, stringify } from 'yaml';
import { SETTINGS_MASK } from '../contract/settings';
import { ConfigError, parseNodeConfig } from './load';
import type { NodeConfig } from './node-config';
import { checkRole } from './role-checks';

/** What a secret reads as on the way out; sent back unchanged, it keeps the stored value. */
const MASK = SETTINGS_MASK;

type Json = Record<string, unknown>;

/** Secrets by path: single values and every item of a list. */
const SECRET_VALUES: [string, string][] = [['cluster', 'token'], ['console', 'token']];
const SECRET_LISTS: [string, string][] = [['console', 'operators'], ['server', 'api_keys']];

const section = (raw: Json, key: string): Json | undefined => {
  const v = raw[key];
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined;
};

/** `redis://user:secret@host` → the password masked; a URL without one is not a secret. */
function maskUrlPassword(url: string): string {
  try {
    const u = new URL(url);
    if (!u.password) return url;
    u.password = MASK;
    return u.toString().replace(encodeURIComponent(MASK), MASK);
  } catch {
    return url;
  }
}

/** A deep copy with every secret masked (never the values themselves). */
export function maskSecrets(raw: Json): Json {
  const out = structuredClone(raw);
  for (const [s, k] of SECRET_VALUES) {
    const sec = section(out, s);
    if (sec && typeof sec[k] === 'string' && sec[k]) sec[k] = MASK;
  }
  for (const [s, k] of SECRET_LISTS) {
    const sec = section(out, s);
    if (sec && Array.isArray(sec[k])) sec[k] = (sec[k] as unknown[]).map(() => MASK);
  }
  const redis = section(out, 'redis');
  if (redis && typeof redis.url === 'string') redis.url = maskUrlPassword(redis.url);
  return out;
}

/** Puts the stored secret back wherever `incoming` still carries the mask (a list item by its position). */
export function unmaskSecrets(incoming: Json, current: Json): Json {
  const out = structuredClone(incoming);
  for (const [s, k] of SECRET_VALUES) {
    const sec = section(out, s);
    if (sec && sec[k] === MASK) sec[k] = section(current, s)?.[k];
  }
  for (const [s, k] of SECRET_LISTS) {
    const sec = section(out, s);
    const was = section(current, s)?.[k];
    if (sec && Array.isArray(sec[k])) sec[k] = (sec[k] as unknown[]).map((v, i) => (v === MASK && Array.isArray(was) ? was[i] : v)).filter((v) => v !== MASK);
  }
  const redis = section(out, 'redis');
  const wasUrl = section(current, 'redis')?.url;
  if (redis && typeof redis.url === 'string' && redis.url.includes(MASK) && typeof wasUrl === 'string') {
    try {
      const u = new URL(redis.url.replace(MASK, 'x'));
      u.password = new URL(wasUrl).password;
      redis.url = u.toString();
    } catch {
      /* left as sent: validation names it */
    }
  }
  return out;
}

/** The config file as written (relative paths and all), `{}` when it does not exist yet. */
export function readConfigFile(file: string): Json {
  if (!existsSync(file)) return {};
  const parsed: unknown = parseYaml(readFileSync(file, 'utf8'));
  return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Json) : {};
}

/** Validates a whole config as start-up would; a `ConfigError` whose issues carry each bad field's path. */
export function validateConfig(raw: Json, file: string): NodeConfig {
  const config = parseNodeConfig(raw, file, dirname(file));
  checkRole(config);
  return config;
}

/** Writes the config atomically (a temp file renamed over it); the previous one is kept as `<file>.bak`. */
export function writeConfigFile(file: string, raw: Json, header = '# Routerdesk node config (written by the Settings screen)\n'): void {
  const tmp = `${file}.tmp-${process.pid}`;
  writeFileSync(tmp, `${header}${stringify(raw)}`, { mode: 0o600 });
  if (existsSync(file)) copyFileSync(file, `${file}.bak`);
  renameSync(tmp, file);
}

export { ConfigError };
