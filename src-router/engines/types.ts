import type { BackendFamily, ModelConfig } from '../config';
import type { Lane } from '../contract';

/** The kinds of work a client can ask for. */
export type Endpoint = 'chat' | 'completion' | 'embedding' | 'image' | 'transcription';

/** The HTTP shape an engine process speaks. */
export type EngineShape = 'llama-server' | 'sd-server' | 'whisper-server' | 'koboldcpp' | 'vllm';

/** How the router calls one endpoint of an engine. */
export type EngineRoute =
  | { kind: 'openai-json'; path: string }
  | { kind: 'kobold-txt2img'; path: string }
  | { kind: 'multipart-transcription'; path: string; responseFormat: 'json' | 'verbose_json' };

export interface LaunchSpec {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** Where the router's own CLI is, for the built-in engines (sim, llama-node). */
export interface CliRef {
  node: string;
  script: string;
  /** Extra environment for the child (under Electron: ELECTRON_RUN_AS_NODE=1, so the binary acts as Node). */
  env?: Record<string, string>;
}

export interface LaunchContext {
  host: string;
  port: number;
  localId: string;
  cli: CliRef;
  /** Which program a command's first word runs (the node: a bare llama-server / whisper-server not on PATH is the cached build). */
  resolveCommand?: (word: string) => string;
}

/** Everything the supervisor and the request path need to know about one backend family. */
export interface EngineAdapter {
  family: BackendFamily;
  shape: EngineShape;
  lane: Lane;
  /** GET this path; 200 means ready, anything else means still loading. */
  healthPath: string;
  routes: Partial<Record<Endpoint, EngineRoute>>;
  launch(config: ModelConfig, ctx: LaunchContext): LaunchSpec;
}
