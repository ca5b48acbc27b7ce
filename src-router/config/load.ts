import { readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import { configPlacementIssues } from './config-placement';
import { type ModelConfig, modelConfigSchema } from './model-config';
import { type NodeConfig, nodeConfigSchema } from './node-config';

/** A config that cannot be used: the message names the file and every bad field by its path. */
export class ConfigError extends Error {
  readonly code = 'config_invalid';
  constructor(
    message: string,
    readonly issues: { path: string; message: string }[] = [],
  ) {
    super(message);
  }
}

export function formatIssues(error: z.ZodError): { path: string; message: string }[] {
  return error.issues.map((issue) => ({
    path: issue.path.length ? issue.path.map(String).join('.') : '(root)',
    message:
      issue.code === 'unrecognized_keys'
        ? `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}`
        : issue.message,
  }));
}

export function parseWith<T extends z.ZodType>(schema: T, raw: unknown, source: string): z.output<T> {
  const result = schema.safeParse(raw ?? {});
  if (result.success) return result.data;
  const issues = formatIssues(result.error);
  throw new ConfigError(
    `${source}: invalid config\n${issues.map((i) => `  ${i.path}: ${i.message}`).join('\n')}`,
    issues,
  );
}

function readYaml(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`${file}: cannot read: ${(err as Error).message}`);
  }
  try {
    return parseYaml(text);
  } catch (err) {
    throw new ConfigError(`${file}: not valid YAML: ${(err as Error).message}`);
  }
}

const within = (base: string, p: string) => (p === '' || isAbsolute(p) ? p : resolve(base, p));

/** Parses a node config object; relative paths are taken from `baseDir`. */
export function parseNodeConfig(raw: unknown, source = 'config', baseDir = process.cwd()): NodeConfig {
  const config = parseWith(nodeConfigSchema, raw, source);
  config.cluster.store_dir = within(baseDir, config.cluster.store_dir);
  config.models.config_dir = within(baseDir, config.models.config_dir);
  config.models.shared_dir = within(baseDir, config.models.shared_dir);
  config.models.browse_dirs = config.models.browse_dirs.map((d) => within(baseDir, d));
  config.server.api_keys_file = within(baseDir, config.server.api_keys_file);
  return config;
}

/** The largest API keys file read (tens of thousands of keys). */
const API_KEYS_FILE_MAX_BYTES = 4 * 1024 * 1024;

/**
 * The client API keys in force: `server.api_keys` plus those of `server.api_keys_file` (one per line; blank lines
 * and `#` comments skipped). A file that cannot be read, or a key shorter than 16 characters, stops start-up.
 */
export function clientApiKeys(config: NodeConfig): string[] {
  const keys = [...config.server.api_keys];
  const file = config.server.api_keys_file;
  if (!file) return keys;
  let text: string;
  try {
    // Only a regular file of bounded size is read: a FIFO would block the read (the whole node), a device never end it.
    const st = statSync(file);
    if (!st.isFile()) throw new ConfigError(`server.api_keys_file ${file} is not a regular file`);
    if (st.size > API_KEYS_FILE_MAX_BYTES)
      throw new ConfigError(`server.api_keys_file ${file} is larger than ${API_KEYS_FILE_MAX_BYTES / 1024 / 1024} MiB`);
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(`server.api_keys_file ${file}: ${(err as Error).message}`);
  }
  text.split(/\r?\n/).forEach((line, i) => {
    const key = line.trim();
    if (!key || key.startsWith('#')) return;
    if (key.length < 16)
      throw new ConfigError(`server.api_keys_file ${file}:${i + 1}: an API key needs at least 16 characters`);
    keys.push(key);
  });
  return keys;
}

/** Reads and parses a node config file, and refuses one that lies where it would be served (`configPlacementIssues`). */
export function loadNodeConfig(file: string): NodeConfig {
  const path = resolve(file);
  return checkPlacement(parseNodeConfig(readYaml(path), path, dirname(path)), path);
}

/** `config` when its file `path` may stay where it is; else a `ConfigError` naming the file and the field. */
export function checkPlacement(config: NodeConfig, path: string): NodeConfig {
  const issues = configPlacementIssues(config, path);
  if (issues.length)
    throw new ConfigError(
      `${path}: invalid config\n${issues.map((i) => `  ${i.path}: ${i.message}`).join('\n')}`,
      issues,
    );
  return config;
}

/** One model config file: its local ID is the file name without extension. */
export interface ModelConfigFile {
  localId: string;
  file: string;
  config: ModelConfig;
}

export function parseModelConfig(raw: unknown, source: string, baseDir: string): ModelConfig {
  const config = parseWith(modelConfigSchema, raw, source);
  if (config.model) config.model = within(baseDir, config.model);
  return config;
}

/** The names of model config files in the models folder. */
export const MODEL_CONFIG_FILE = /\.ya?ml$/i;
