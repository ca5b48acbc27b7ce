import { LLAMA_RUNTIME_ENV } from '../engines/llama-node/runtime';

/**
 * Variables a child process of the node (an engine, nvidia-smi) takes from the node's environment by name: where
 * programs and libraries are, the user, locale and time zone, temporary files, which GPUs to use, Python's virtual
 * environment (vLLM), caches, Windows' system folders, and the built-in llama engine's runtime folder.
 */
const NAMES = new Set([
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'LANG',
  'LANGUAGE',
  'TZ',
  'TMPDIR',
  'TMP',
  'TEMP',
  'LD_LIBRARY_PATH',
  'DYLD_LIBRARY_PATH',
  'DYLD_FALLBACK_LIBRARY_PATH',
  'NVIDIA_VISIBLE_DEVICES',
  'NVIDIA_DRIVER_CAPABILITIES',
  'GPU_DEVICE_ORDINAL',
  'ROCM_PATH',
  'ZE_AFFINITY_MASK',
  'ONEAPI_DEVICE_SELECTOR',
  'VK_ICD_FILENAMES',
  'VK_DRIVER_FILES',
  'HF_HOME',
  'HF_HUB_CACHE',
  'HF_HUB_OFFLINE',
  'TRANSFORMERS_CACHE',
  'TRANSFORMERS_OFFLINE',
  'XDG_CACHE_HOME',
  'VIRTUAL_ENV',
  'CONDA_PREFIX',
  'PYTHONPATH',
  'PYTHONHOME',
  'SYSTEMROOT',
  'WINDIR',
  'COMSPEC',
  'PATHEXT',
  'USERPROFILE',
  'APPDATA',
  'LOCALAPPDATA',
  'PROGRAMDATA',
  'PROGRAMFILES',
  'NUMBER_OF_PROCESSORS',
  'PROCESSOR_ARCHITECTURE',
  LLAMA_RUNTIME_ENV,
]);

/**
 * ...and by prefix: locale categories, the engines' own settings (llama.cpp's `LLAMA_ARG_*`, ggml's, vLLM's), thread
 * pools and BLAS libraries (`OPENBLAS_CORETYPE` and the like are set on purpose on some machines), GPU runtimes and
 * their collectives (NCCL, PyTorch's allocator, for vLLM).
 */
const PREFIXES = [
  'LC_',
  'GGML_',
  'LLAMA_',
  'VLLM_',
  'OMP_',
  'KMP_',
  'GOMP_',
  'OPENBLAS_',
  'MKL_',
  'NVPL_',
  'BLIS_',
  'CUDA_',
  'HIP_',
  'ROCR_',
  'HSA_',
  'NCCL_',
  'PYTORCH_',
];

/** The node's own variables: its settings, tokens and the operators' tokens (`INFERENCE_ADMIN_EMAILS`). */
const NODE_PREFIXES = ['ROUTERDESK_', 'INFERENCE_'];

/** Whether `name` is the node's own variable, which no child gets unless named (`LLAMA_RUNTIME_ENV`) or set by a model's `env`. */
export function isNodeVariable(name: string): boolean {
  const upper = name.toUpperCase();
  return NODE_PREFIXES.some((p) => upper.startsWith(p));
}

/** Whether an engine takes `name` from the node's environment. Names are case-insensitive on Windows only. */
export function passesToEngine(name: string, platform: NodeJS.Platform = process.platform): boolean {
  const n = platform === 'win32' ? name.toUpperCase() : name;
  if (NAMES.has(n)) return true;
  return !isNodeVariable(n) && PREFIXES.some((p) => n.startsWith(p));
}

/**
 * The environment of an engine process: the allow-listed part of the node's (`parent`), then what its launch spec
 * sets — the model config's `env` and, for the built-in engines, the CLI's (ELECTRON_RUN_AS_NODE under Electron) —,
 * which an operator names on purpose and which therefore wins. Nothing else of the node's reaches it.
 */
export function engineEnv(
  parent: NodeJS.ProcessEnv,
  launchEnv: Record<string, string> = {},
  platform: NodeJS.Platform = process.platform,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(parent)) {
    if (value !== undefined && passesToEngine(name, platform)) env[name] = value;
  }
  return Object.assign(env, launchEnv);
}

/** The node's environment less its own variables: for a desktop helper (the browser opener) that needs the user's session. */
export function withoutNodeVariables(parent: NodeJS.ProcessEnv): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(parent)) {
    if (value !== undefined && !isNodeVariable(name)) env[name] = value;
  }
  return env;
}
