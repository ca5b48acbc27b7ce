import type { FastifyBaseLogger } from 'fastify';
import { fetchAnswer } from '../backends/answer-limits';
import { peerRead } from '../contract/peer-read';
import { REPLAY_SOURCE_MAX_BYTES, type ReplayResultWire, replaySourceSchema } from '../contract/replay';
import { type ReplaySettings, replay, replayLinks, withSettingChanges } from '../lending/replay';
import type { DecisionRow, ReplaySource } from '../store';

export interface ReplayRange {
  from: number;
  to: number;
}

export interface ReplayGatherDeps {
  clusterToken: string;
  /** This node's own rows (read from its store directly). */
  own(q: ReplayRange): ReplaySource;
  /** The healthy members to ask (none on a slave or standalone node). */
  members(): { nodeId: string; url: string }[];
  /** The settings this node runs with (the recorded ones the changes apply to). */
  settings: ReplaySettings;
  log: FastifyBaseLogger;
  /** Per member (default 10 s). */
  timeoutMs?: number;
  /** The most bytes read of one member's answer (default REPLAY_SOURCE_MAX_BYTES). */
  maxBytes?: number;
}

/** One member's rows for the range through its node API, parsed with the contract; null (and logged) when it fails. */
async function memberSource(
  d: ReplayGatherDeps,
  m: { nodeId: string; url: string },
  q: ReplayRange,
): Promise<ReplaySource | null> {
  try {
    const qs = new URLSearchParams({ from: String(q.from), to: String(q.to) });
    const res = await fetch(`${m.url}/router/v1/node/replay-source?${qs}`, {
      headers: { authorization: `Bearer ${d.clusterToken}` },
      signal: AbortSignal.timeout(d.timeoutMs ?? 10_000),
    });
    if (!res.ok) throw new Error(`${res.status}`);
    const parsed = peerRead(replaySourceSchema).safeParse(
      await fetchAnswer(res).json(d.maxBytes ?? REPLAY_SOURCE_MAX_BYTES),
    );
    if (!parsed.success)
      throw new Error(
        `not replay rows: ${parsed.error.issues[0]?.path.join('.') || '(root)'}: ${parsed.error.issues[0]?.message}`,
      );
    // The decision rows' unions are the log's own; the wire's strings are those values (the node wrote them).
    return { ...parsed.data, decisions: parsed.data.decisions as DecisionRow[] };
  } catch (err) {
    d.log.warn({ nodeId: m.nodeId }, `replay rows of node not gathered: ${(err as Error).message}`);
    return null;
  }
}

export interface ConsoleReplayInput extends ReplayRange {
  settings: Record<string, unknown>;
  links?: Parameters<typeof replayLinks>[0];
  maxEvents: number;
}

/**
 * The console's what-if replay: this node's rows and every healthy member's for the range, replayed with the
 * changed settings (and links). A member that does not answer is listed in `missing`; the replay runs without it.
 * Bad setting values throw the 400 naming `settings.KEY` before anything is read.
 */
export async function gatherReplay(d: ReplayGatherDeps, input: ConsoleReplayInput): Promise<ReplayResultWire> {
  const settings = withSettingChanges(d.settings, input.settings);
  const links = input.links ? replayLinks(input.links) : undefined;
  const q = { from: input.from, to: input.to };
  const members = d.members();
  const remotes = await Promise.all(members.map((m) => memberSource(d, m, q)));
  const missing = members
    .filter((_, i) => remotes[i] === null)
    .map((m) => m.nodeId)
    .sort();
  const sources = [d.own(q), ...remotes.filter((r): r is ReplaySource => r !== null)];
  const result = replay(sources, { from: q.from, to: q.to, settings, links, maxEvents: input.maxEvents });
  return { ...result, ...(missing.length ? { missing } : {}) };
}
