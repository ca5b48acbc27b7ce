import type { FastifyBaseLogger } from 'fastify';
import { type ClusterNodeView, type NodeSnapshot, nodeSnapshotSchema, peerRead, RouterError } from '../contract';
import type { NodeRecords } from '../registry';
import type { ClusterStore } from '../store';
import { boundSnapshot, snapshotRefusal } from './member-bounds';
import { type NodeClient, normalizeUrl } from './node-client';

interface Member {
  url: string;
  nodeId: string | null;
  snapshot: NodeSnapshot | null;
  healthy: boolean;
  lastSeen: number | null;
  lastError: string | null;
  polling: boolean;
  /** A registration arrived while a poll was under way: that poll may have read the state before it, so poll again. */
  again?: boolean;
  /** What of its snapshot was not taken (over the member bounds), as its row shows it. */
  warnings: string[];
}

export interface MembershipOptions {
  localNodeId: string;
  slaveUrls: string[];
  healthIntervalMs: number;
  client: NodeClient;
  store: ClusterStore;
  log: FastifyBaseLogger;
  /** Called after any change of a member's snapshot or health (the catalog is rebuilt). */
  onChange(): void;
  now?(): number;
}

/**
 * The master's view of its slaves (ROLE-4, HEALTH-1/2/4): registrations only from `cluster.slave_urls`, a poll of
 * every configured URL at start-up and each health interval, whole-node health, last known state kept in the store.
 */
export class Membership {
  private readonly members = new Map<string, Member>();
  private timer?: NodeJS.Timeout;
  private readonly now: () => number;

  constructor(private readonly opts: MembershipOptions) {
    this.now = opts.now ?? Date.now;
    const stored = new Map(opts.store.nodes().map((n) => [n.url, n]));
    for (const raw of opts.slaveUrls) {
      const url = normalizeUrl(raw);
      const s = stored.get(url);
      let snapshot: NodeSnapshot | null = null;
      if (s?.snapshot) {
        const parsed = peerRead(nodeSnapshotSchema).safeParse(JSON.parse(s.snapshot));
        if (parsed.success && !snapshotRefusal(parsed.data)) snapshot = boundSnapshot(parsed.data).snapshot;
      }
      // Last known state is shown, but nothing on it is routable until a poll succeeds (HEALTH-2).
      this.members.set(url, {
        url,
        nodeId: s?.nodeId ?? null,
        snapshot,
        healthy: false,
        lastSeen: s?.lastSeen ?? null,
        lastError: s ? 'not polled since the master started' : null,
        polling: false,
        warnings: [],
      });
    }
  }

  /** Polls every slave once (awaited, so the first catalog does not depend on poll order), then on each interval. */
  async start(): Promise<void> {
    await this.pollAll();
    this.timer = setInterval(() => void this.pollAll(), this.opts.healthIntervalMs);
    this.timer.unref();
  }

  /** After stop, polls still in flight change nothing (the store may already be closed). */
  private stopped = false;

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  async pollAll(): Promise<void> {
    await Promise.all([...this.members.values()].map((m) => this.poll(m)));
  }

  private async poll(m: Member, registered = false): Promise<void> {
    if (this.stopped) return;
    if (m.polling) {
      if (registered) m.again = true;
      return;
    }
    m.polling = true;
    try {
      const snapshot = await this.opts.client.snapshot(m.url);
      this.accept(m, snapshot);
    } catch (err) {
      if (!this.stopped) this.markUnhealthy(m, err instanceof RouterError ? err.message : (err as Error).message);
    } finally {
      m.polling = false;
    }
    if (m.again) {
      m.again = false;
      await this.poll(m);
    }
  }

  /** A registration (HEALTH-1): only from a configured URL (403), never a duplicate node id (409). */
  register(snapshot: NodeSnapshot): { masterId: string } {
    const refusal = snapshotRefusal(snapshot);
    if (refusal)
      throw new RouterError(400, 'invalid_snapshot', `registration refused: ${refusal}`, 'invalid_request_error');
    const url = snapshot.publicUrl ? normalizeUrl(snapshot.publicUrl) : null;
    const m = url ? this.members.get(url) : undefined;
    if (!m) {
      this.opts.log.warn({ nodeId: snapshot.nodeId, url }, 'registration refused: URL not in cluster.slave_urls');
      throw new RouterError(
        403,
        'not_a_configured_slave',
        `registration from ${url ?? '(no public_url)'} refused: it is not listed in the master's cluster.slave_urls`,
        'permission_error',
      );
    }
    // A registration is bound to the URL it names and to the node_id that URL reports: one node cannot register
    // under another's URL and replace its models. What the master serves comes only from its own poll
    // of that URL (HEALTH-2); a registration only asks for that poll now.
    const dup = this.duplicateOf(m, snapshot.nodeId);
    if (dup) {
      this.opts.log.error({ url: m.url }, `duplicate node id refused: ${dup}`);
      throw new RouterError(409, 'duplicate_node_id', `${dup}; every node needs a unique cluster.node_id`);
    }
    if (m.nodeId !== null && m.nodeId !== snapshot.nodeId) {
      this.opts.log.error(
        { url: m.url, claimed: snapshot.nodeId, polled: m.nodeId },
        'registration refused: the URL reports another node_id',
      );
      void this.poll(m);
      throw new RouterError(
        409,
        'registration_mismatch',
        `registration as '${snapshot.nodeId}' refused: ${m.url} reports node_id '${m.nodeId}'`,
      );
    }
    void this.poll(m, true);
    return { masterId: this.opts.localNodeId };
  }

  private duplicateOf(m: Member, nodeId: string): string | null {
    if (nodeId === this.opts.localNodeId) return `node_id '${nodeId}' is the master's own`;
    for (const other of this.members.values()) {
      if (other !== m && other.nodeId === nodeId && other.healthy)
        return `node_id '${nodeId}' is already registered from ${other.url}`;
    }
    return null;
  }

  /**
   * A polled snapshot, taken within the member bounds: a field over its bound refuses it whole (the member is
   * unhealthy, saying why); records past the bounds are dropped, each kind named in the member's warnings.
   */
  private accept(m: Member, advertised: NodeSnapshot) {
    const refusal = snapshotRefusal(advertised);
    if (refusal) {
      if (m.lastError !== `refused: ${refusal}`) this.opts.log.warn({ url: m.url }, `member refused: ${refusal}`);
      throw new RouterError(502, 'invalid_snapshot', `refused: ${refusal}`);
    }
    const { snapshot, warnings } = boundSnapshot(advertised);
    if (warnings.join('\n') !== m.warnings.join('\n')) {
      if (warnings.length)
        this.opts.log.warn(
          { url: m.url, nodeId: snapshot.nodeId },
          `member's models not all taken: ${warnings.join('; ')}`,
        );
      m.warnings = warnings;
    }
    const dup = this.duplicateOf(m, snapshot.nodeId);
    if (dup) {
      this.markUnhealthy(m, `refused: ${dup}`);
      this.opts.log.error({ url: m.url }, `duplicate node id refused: ${dup}`);
      throw new RouterError(409, 'duplicate_node_id', `${dup}; every node needs a unique cluster.node_id`);
    }
    const changed = !m.healthy || JSON.stringify(m.snapshot) !== JSON.stringify(snapshot);
    Object.assign(m, { nodeId: snapshot.nodeId, snapshot, healthy: true, lastSeen: this.now(), lastError: null });
    this.persist(m);
    if (changed) this.opts.onChange();
  }

  private markUnhealthy(m: Member, reason: string) {
    const changed = m.healthy || m.lastError !== reason;
    if (m.healthy) this.opts.log.warn({ url: m.url, nodeId: m.nodeId }, `node unhealthy: ${reason}`);
    m.healthy = false;
    m.lastError = reason;
    if (changed) {
      this.persist(m);
      this.opts.onChange();
    }
  }

  private persist(m: Member) {
    if (this.stopped) return;
    this.opts.store.saveNode({
      url: m.url,
      nodeId: m.nodeId,
      snapshot: m.snapshot ? JSON.stringify(m.snapshot) : null,
      version: m.snapshot?.version ?? null,
      settingsHash: m.snapshot?.settingsHash ?? null,
      healthy: m.healthy,
      lastSeen: m.lastSeen,
      lastError: m.lastError,
    });
  }

  /** Inputs of the identity merge: every member with a known snapshot; unhealthy ones count as unavailable. */
  nodeRecords(): NodeRecords[] {
    return [...this.members.values()]
      .filter((m) => m.snapshot && m.nodeId)
      .map((m) => ({
        nodeId: m.nodeId!,
        local: false,
        healthy: m.healthy,
        url: m.url,
        records: m.snapshot!.models.map((r) => ({ ...r, source: 'remote_node' as const })),
      }));
  }

  /** The URL of a known member by node id. */
  urlOf(nodeId: string): string | undefined {
    return [...this.members.values()].find((m) => m.nodeId === nodeId)?.url;
  }

  /** Every member whose node ID is known, with the URL it is polled at (what slaves resolve guardian URLs from). */
  known(): { nodeId: string; url: string }[] {
    return [...this.members.values()].filter((m) => m.nodeId).map((m) => ({ nodeId: m.nodeId!, url: m.url }));
  }

  /** Healthy members that serve runtime status (STT-5). */
  statusCapable(): { nodeId: string; url: string }[] {
    return [...this.members.values()]
      .filter((m) => m.healthy && m.snapshot?.runtimeStatus)
      .map((m) => ({ nodeId: m.nodeId!, url: m.url }));
  }

  /** The versions of pushed settings a member reports it runs (links: LEASE-1; guardian settings: GUARD-1). */
  applied(nodeId: string): { linksVersion?: number; guardiansVersion?: number } {
    const snap = [...this.members.values()].find((m) => m.nodeId === nodeId)?.snapshot;
    return { linksVersion: snap?.linksVersion, guardiansVersion: snap?.guardiansVersion };
  }

  views(): ClusterNodeView[] {
    return [...this.members.values()].map((m) => ({
      nodeId: m.nodeId ?? '(unknown)',
      url: m.url,
      role: m.snapshot?.role ?? 'slave',
      local: false,
      healthy: m.healthy,
      lastSeen: m.lastSeen ? new Date(m.lastSeen).toISOString() : null,
      lastError: m.lastError,
      version: m.snapshot?.version ?? null,
      settingsHash: m.snapshot?.settingsHash ?? null,
      models: m.snapshot?.models.length ?? 0,
      ...(m.warnings.length ? { warnings: [...m.warnings] } : {}),
    }));
  }
}
