/**
 * The node config as the Settings screen edits it: the YAML's own shape as JSON with secrets masked, the
 * same validation as start-up (zod schema, role checks: a 400 names the field path), and an atomic write that keeps
 * the previous file as `.bak`.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parse as parseYaml, stringify } from 'yaml';
import { MASK_ITEM_SEPARATOR, SETTINGS_MASK } from '../contract/settings';
import { fsyncDir, replaceFile } from './durable-file';
import { ConfigError, checkPlacement, parseNodeConfig } from './load';
import type { NodeConfig } from './node-config';
import { checkRole } from './role-checks';

/** What a single secret reads as on the way out; sent back unchanged, it keeps the stored value. */
const MASK = SETTINGS_MASK;

type Json = Record<string, unknown>;

/** Secrets by path: single values and every item of a list. */
const SECRET_VALUES: [string, string][] = [
  ['cluster', 'token'],
  ['console', 'token'],
];
const SECRET_LISTS: [string, string][] = [
  ['console', 'operators'],
  ['server', 'api_keys'],
];

const section = (raw: Json, key: string): Json | undefined => {
  const v = raw[key];
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined;
};

/**
 * The key that names a list secret on the way out: random per process, so a mask identifies its stored item to this
 * node (across in-process restarts) and tells nothing about the secret to anyone else.
 */
const ITEM_KEY = randomBytes(32);

/** A list item's mask: the mask and an HMAC of the item, so a list edited in any order still names its items. */
export const maskListItem = (value: string): string =>
  `${MASK}${MASK_ITEM_SEPARATOR}${createHmac('sha256', ITEM_KEY).update(value).digest('hex').slice(0, 12)}`;

/** The URL with its password masked, or null when it is no URL or has no password (then it is not a secret). */
function maskUrlPassword(url: string): string | null {
  try {
    const u = new URL(url);
    if (!u.password) return null;
    u.password = MASK;
    return u.toString().replace(encodeURIComponent(MASK), MASK);
  } catch {
    return null;
  }
}

/** What the mask in a Redis URL is read as, to find where it stands. */
const MASKED_PASSWORD = 'masked-stored-password';

/**
 * Where a Redis URL's password goes: its scheme, host and port, and its query — the Redis client takes connection
 * options from it too (`?path=` a Unix socket instead of host:port, `?port=`).
 */
function redisDestination(url: string): string | null {
  try {
    const u = new URL(url.replaceAll(MASK, MASKED_PASSWORD));
    return `${u.protocol}//${u.host}${u.search}`;
  } catch {
    return null;
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
    if (sec && Array.isArray(sec[k])) sec[k] = (sec[k] as unknown[]).map((v) => maskListItem(String(v)));
  }
  const redis = section(out, 'redis');
  if (redis && typeof redis.url === 'string') redis.url = maskUrlPassword(redis.url) ?? redis.url;
  for (const { route } of staticEndpoints(out))
    route.endpoints = (route.endpoints as unknown[]).map((e) =>
      typeof e === 'string' ? (maskUrlPassword(e) ?? e) : e,
    );
  return out;
}

/** The static routes of a raw config whose `endpoints` is a list, by model. */
function staticEndpoints(raw: Json): { model: string; route: Json & { endpoints: unknown[] } }[] {
  const routes = section(section(raw, 'routing') ?? {}, 'static_routes');
  if (!routes) return [];
  return Object.entries(routes).flatMap(([model, route]) =>
    route && typeof route === 'object' && Array.isArray((route as Json).endpoints)
      ? [{ model, route: route as Json & { endpoints: unknown[] } }]
      : [],
  );
}

/**
 * Where the cluster token is sent: the master a slave registers with, the slaves a master polls, and the node's own
 * `public_url` — a master lists it among its members, and slaves call a guardian on the master there with the token.
 */
function clusterDestinations(raw: Json): string[] {
  const c = section(raw, 'cluster');
  const urls = [
    ...(Array.isArray(c?.slave_urls) ? c.slave_urls : []),
    ...[c?.master_url, c?.public_url].filter((u) => typeof u === 'string'),
  ];
  return urls.filter((u): u is string => typeof u === 'string').map((u) => u.trim().replace(/\/+$/, '').toLowerCase());
}

const refused = (path: string, message: string) => new ConfigError(`${path}: ${message}`, [{ path, message }]);

/**
 * Puts the stored secret back wherever `incoming` still carries a mask. A secret stays with its destination: a masked
 * cluster token while a new master or slave URL appears, or a masked Redis password whose host changed, is refused
 * (`ConfigError` at the field). A masked list item names its stored item (`maskListItem`), whatever its position; one
 * that names none is refused.
 */
export function unmaskSecrets(incoming: Json, current: Json): Json {
  const out = structuredClone(incoming);
  for (const [s, k] of SECRET_VALUES) {
    const sec = section(out, s);
    if (sec && sec[k] === MASK) sec[k] = section(current, s)?.[k];
  }
  const token = section(incoming, 'cluster')?.token;
  if (token === MASK) {
    const known = new Set(clusterDestinations(current));
    const added = clusterDestinations(incoming).filter((u) => !known.has(u));
    if (added.length)
      throw refused(
        'cluster.token',
        `the stored cluster token was never sent to ${added.join(', ')}: give the secret again for the new destination`,
      );
  }
  for (const [s, k] of SECRET_LISTS) {
    const sec = section(out, s);
    if (!sec || !Array.isArray(sec[k])) continue;
    const was = section(current, s)?.[k];
    const stored = new Map((Array.isArray(was) ? was : []).map((v) => [maskListItem(String(v)), v]));
    sec[k] = (sec[k] as unknown[]).map((v, i) => {
      if (typeof v !== 'string' || !v.startsWith(MASK)) return v;
      if (!stored.has(v))
        throw refused(
          `${s}.${k}.${i}`,
          'this masked item names no stored secret (changed meanwhile?): give the secret again',
        );
      return stored.get(v);
    });
  }
  // A static-route endpoint's masked password is the stored one of the same upstream and user, wherever it stood.
  const storedEndpoints = new Map<string, string>();
  for (const { route } of staticEndpoints(current))
    for (const e of route.endpoints) {
      const masked = typeof e === 'string' ? maskUrlPassword(e) : null;
      if (masked !== null && !storedEndpoints.has(masked)) storedEndpoints.set(masked, e as string);
    }
  for (const { model, route } of staticEndpoints(out))
    route.endpoints = route.endpoints.map((e, i) => {
      if (typeof e !== 'string' || !e.includes(MASK)) return e;
      const stored = storedEndpoints.get(e);
      if (stored === undefined)
        throw refused(
          `routing.static_routes.${model}.endpoints.${i}`,
          `the mask stands for the stored password of this same upstream and user (http://user:${MASK}@host:port): give the password`,
        );
      return stored;
    });
  const redis = section(out, 'redis');
  const wasUrl = section(current, 'redis')?.url;
  if (redis && typeof redis.url === 'string' && redis.url.includes(MASK)) {
    const storedPassword =
      typeof wasUrl === 'string' && maskUrlPassword(wasUrl) !== null ? new URL(wasUrl).password : null;
    if (storedPassword === null) throw refused('redis.url', 'there is no stored password to keep: give the password');
    let u: URL;
    try {
      u = new URL(redis.url.replaceAll(MASK, MASKED_PASSWORD));
    } catch {
      throw refused('redis.url', 'not a URL');
    }
    if (u.password !== MASKED_PASSWORD || u.username.includes(MASKED_PASSWORD) || u.host.includes(MASKED_PASSWORD))
      throw refused('redis.url', 'the mask stands only for the stored password (redis://user:••••••••@host:port)');
    if (redisDestination(redis.url) !== redisDestination(wasUrl as string))
      throw refused(
        'redis.url',
        `the stored password belongs to ${redisDestination(wasUrl as string)}: give the secret again for the new destination`,
      );
    u.password = storedPassword;
    redis.url = u.toString();
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
  const config = checkPlacement(parseNodeConfig(raw, file, dirname(file)), file);
  checkRole(config);
  return config;
}

/**
 * Writes the config atomically and durably: the previous file is kept as `<file>.bak`, then the new text replaces the
 * config, each through a temp file of its own (PID and random suffix, created exclusively, fsynced) renamed over it,
 * and the folder is fsynced, so a crash leaves either the old or the new file whole. A rename replaces a link planted
 * at either name instead of writing through it.
 */
export function writeConfigFile(
  file: string,
  raw: Json,
  header = '# Routerdesk node config (written by the Settings screen)\n',
): void {
  if (existsSync(file)) replaceFile(`${file}.bak`, readFileSync(file));
  replaceFile(file, `${header}${stringify(raw)}`);
  fsyncDir(dirname(file));
}

/** Puts `<file>.bak` back as the config (durably, as `writeConfigFile` writes); false when there is none. */
export function restoreConfigBackup(file: string): boolean {
  if (!existsSync(`${file}.bak`)) return false;
  replaceFile(file, readFileSync(`${file}.bak`));
  fsyncDir(dirname(file));
  return true;
}

export { ConfigError };
