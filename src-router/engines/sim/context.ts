import type { SimEngineOptions } from './options';
import type { SeenRing } from './seen';
import type { EngineState } from './state';

/** What every route of one running sim engine shares. */
export interface SimEngineContext {
  readonly options: SimEngineOptions;
  readonly state: EngineState;
  /** The last requests received and how they went (`GET /sim/seen`, a test hook). */
  readonly seen: SeenRing;
  /** True once the simulated load is over (for `slow_health`, after 20 × load_time). */
  loaded(): boolean;
  /** Simulated duration → wall-clock milliseconds (divided by time_scale). */
  scaled(ms: number): number;
  /** The model ID a response names when the request names none. */
  readonly modelId: string;
  /** Simulates the process dying with this exit code (in a real process, it exits). */
  crash(code: number): void;
}
