/**
 * Finds and loads node-llama-cpp from resources/llama-runtime, an install of its own (CPU build only) that the
 * root node_modules cannot resolve. ROUTERDESK_LLAMA_RUNTIME names the folder (the one holding node_modules)
 * explicitly; otherwise the folder is searched upwards from this module and from the running script.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Llama, NodeLlamaCpp } from './llama-api';

export const LLAMA_RUNTIME_ENV = 'ROUTERDESK_LLAMA_RUNTIME';
export const NODE_LLAMA_CPP_VERSION = '3.21.1';
const PACKAGE_JSON = join('node_modules', 'node-llama-cpp', 'package.json');
const RUNTIME_DIR = join('resources', 'llama-runtime');

export interface LlamaRuntimeLocation {
  /** the resources/llama-runtime folder */
  dir: string;
  /** node-llama-cpp's package folder */
  packageDir: string;
  version: string;
  /** how it was found */
  via: 'env' | 'module' | 'script';
}

function inspect(dir: string, via: LlamaRuntimeLocation['via']): LlamaRuntimeLocation | undefined {
  const pkg = join(dir, PACKAGE_JSON);
  if (!existsSync(pkg)) return undefined;
  const { version } = JSON.parse(readFileSync(pkg, 'utf8')) as { version?: string };
  return { dir, packageDir: dirname(pkg), version: version ?? 'unknown', via };
}

/** Walks up from `start` looking for resources/llama-runtime/node_modules/node-llama-cpp/package.json. */
function searchUp(start: string, via: LlamaRuntimeLocation['via']): LlamaRuntimeLocation | undefined {
  let dir = resolve(start);
  for (;;) {
    const found = inspect(join(dir, RUNTIME_DIR), via);
    if (found) return found;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

function moduleDir(): string | undefined {
  try {
    return dirname(fileURLToPath(import.meta.url));
  } catch {
    return undefined; // bundled into something without a file URL
  }
}

/** Where node-llama-cpp is; throws with every place it looked when it is nowhere. */
export function findLlamaRuntime(
  env: NodeJS.ProcessEnv = process.env,
  script: string | undefined = process.argv[1],
): LlamaRuntimeLocation {
  const override = env[LLAMA_RUNTIME_ENV];
  if (override) {
    const found = inspect(resolve(override), 'env');
    if (!found) throw new Error(`${LLAMA_RUNTIME_ENV}=${override} has no ${PACKAGE_JSON}`);
    return found;
  }
  const starts: Array<[string | undefined, LlamaRuntimeLocation['via']]> = [
    [moduleDir(), 'module'],
    [script ? dirname(resolve(script)) : undefined, 'script'],
  ];
  for (const [start, via] of starts) {
    const found = start ? searchUp(start, via) : undefined;
    if (found) return found;
  }
  const looked = starts.flatMap(([s]) => (s ? [s] : [])).join(', ');
  throw new Error(
    `node-llama-cpp not found: no ${join(RUNTIME_DIR, PACKAGE_JSON)} above ${looked}; set ${LLAMA_RUNTIME_ENV} or run npm install`,
  );
}

let loaded: Promise<NodeLlamaCpp> | undefined;

/** Imports node-llama-cpp once per process (by absolute file URL). */
export function loadNodeLlamaCpp(location: LlamaRuntimeLocation = findLlamaRuntime()): Promise<NodeLlamaCpp> {
  loaded ??= (async () => {
    const entry = pathToFileURL(join(location.packageDir, 'dist', 'index.js')).href;
    return (await import(/* @vite-ignore */ entry)) as NodeLlamaCpp;
  })();
  loaded.catch(() => {
    loaded = undefined;
  });
  return loaded;
}

let sharedLlama: Promise<Llama> | undefined;

/**
 * The process's one llama.cpp binding: CPU only and never built from source (the prebuilt binary ships in
 * @node-llama-cpp/linux-x64). It is kept for the life of the process; models and contexts are what get disposed.
 */
export function getSharedLlama(lib: NodeLlamaCpp): Promise<Llama> {
  sharedLlama ??= lib.getLlama({ gpu: false, build: 'never', logLevel: 'error', progressLogs: false });
  sharedLlama.catch(() => {
    sharedLlama = undefined;
  });
  return sharedLlama;
}
