/**
 * What a replay takes (a snapshot of recorded traffic, measured costs, links and settings) and gives back. Pure data:
 * `recorded.ts` builds it from store rows, `simulate.ts` replays it in simulated time.
 */
import type { LoadRow, RequestEndpoint, RequestRow } from '../../store';
import type { LendingLane, LinkSpec } from '../types';

/** One recorded client request, at the node that received it (its owner). */
export interface ReplayRequest {
  id: string;
  node: string;
  /** Local ID on `node`. */
  model: string;
  endpoint: RequestEndpoint;
  arrivedAt: number;
  /** Work measure (tokens generated for text, pixels × steps × count for images). */
  work: number;
  stream: boolean;
  bodyBytes: number;
  promptTokens: number | null;
  /** Measured service time where it ran, by `node/model`. */
  serviceMs: Record<string, number>;
  /**
   * Where it ran, how long its job held the lane beyond the engine's report (derived − engine-reported): a replay that
   * runs it there again takes this job's own, not its model's mean (`jobOverheadMs`): a record made while the
   * machine was busy is replayed with the delays it had.
   */
  overheadMs?: number;
  recorded: {
    finishedAt: number;
    /** Arrival to the start of its service (completion − service time). */
    waitMs: number;
    /** `node/model` that served it. */
    ranOn: string;
  };
}

export interface ReplayModel {
  nodeId: string;
  model: string;
  lane: LendingLane;
  /** The runtime lane it loads into (kobold's shared process: several models, one lane). */
  runtimeLane: string;
  /** Every recorded successful load time of it (the sim's loads cost their mean). */
  loadSamplesMs: number[];
  /**
   * Measured time a job holds its lane beyond the engine's own report (dispatch, answer relay inside the node): the
   * mean of the derived service time minus the engine-reported one, 0 when never measured.
   */
  jobOverheadMs?: number;
}

export interface ReplaySettings {
  depth: number;
  refreshIntervalMs: number;
  minSamples: number;
  sampleWindowMs: number;
  contextReserve: number;
  probeIdleMs: number;
  holdEnabled: boolean;
  /** The master's poll and plan between an owner's event and its answer (measured on loopback: a few ms). */
  decisionLatencyMs: number;
  /** One way of a lent request's relay (owner → master → helper, and its answer back). */
  relayMs: number;
}

export interface ReplayInput {
  from: number;
  to: number;
  requests: ReplayRequest[];
  /** Rows finished before `from`: the fits start from them, as the nodes' did. */
  history: RequestRow[];
  /** Loads finished before `from` (PRICE-4). */
  historyLoads: LoadRow[];
  models: ReplayModel[];
  /** What each node's runtime lanes held at `from`. */
  lanesAtStart: Record<string, Record<string, string | null>>;
  links: LinkSpec[];
  settings: ReplaySettings;
  /**
   * A node's own-work idleness as the master measured it live (the plan rows' `helperIdleMs`): where the replay's
   * idleness of a node starts (`idle.ts`), so a probe waits for `offload_probe_idle` as it did live.
   */
  idleSamples?: IdleSample[];
}

/** One live measurement of a node's own-work idleness (PROBE-3): `idleMs` at `at`. */
export interface IdleSample {
  nodeId: string;
  at: number;
  idleMs: number;
}

/** One request as the replay ran it. */
export interface ReplayedRequest {
  id: string;
  arrivedAt: number;
  finishedAt: number;
  waitMs: number;
  ranOn: string;
}
