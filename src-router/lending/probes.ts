/**
 * Probes (PROBE-1..4): a helper the cost rule does not choose still gets a one-request lease once idle long
 * enough, so every linked pair gathers the samples its own fit needs. Pure.
 */
import type { PlanSettings } from './types';

/** PROBE-1: `cluster.offload_probe_idle`, times `switchProbeFactor` (12) when the helper must switch models. */
export function probeIdleThresholdMs(settings: PlanSettings, mustSwitch: boolean): number {
  return settings.probeIdleMs * (mustSwitch ? settings.switchProbeFactor : 1);
}

export interface ProbeTiming {
  /** The helper has idled from its own work long enough (PROBE-3: borrowed work does not count as busy). */
  due: boolean;
  /** When it will have (now when already due): PROBE-4's wake-up time. */
  dueAt: number;
  thresholdMs: number;
}

export function probeTiming(now: number, ownIdleMs: number, settings: PlanSettings, mustSwitch: boolean): ProbeTiming {
  const thresholdMs = probeIdleThresholdMs(settings, mustSwitch);
  const idle = Math.max(0, ownIdleMs);
  return { due: idle >= thresholdMs, dueAt: now + Math.max(0, thresholdMs - idle), thresholdMs };
}

export interface ProbeCandidate {
  helperKey: string;
  linkId: string;
  mustSwitch: boolean;
  idleMs: number;
}

/**
 * An owner has one lease at a time, so of several helpers due for a probe one gets it. Interpretation (the seed
 * is silent): the cheapest probe first, one that needs no model switch, then the longest idle, then by helper
 * and link for a deterministic answer.
 */
export function compareProbeCandidates(a: ProbeCandidate, b: ProbeCandidate): number {
  if (a.mustSwitch !== b.mustSwitch) return a.mustSwitch ? 1 : -1;
  if (a.idleMs !== b.idleMs) return b.idleMs - a.idleMs;
  return a.helperKey < b.helperKey
    ? -1
    : a.helperKey > b.helperKey
      ? 1
      : a.linkId < b.linkId
        ? -1
        : a.linkId > b.linkId
          ? 1
          : 0;
}
