import { createHash } from 'node:crypto';
import type { Supervisor } from '../backends';
import type { NodeConfig } from '../config';
import type { NodeModelRecord, NodeSnapshot } from '../contract';
import { canonicalJson, type ModelRegistry } from '../registry';

/** Hash of the settings a master pushes (scheduling and offload keys), so each node can show whether it runs the master's. */
export function settingsHash(config: NodeConfig): string {
  const picked = Object.fromEntries(
    Object.entries(config.cluster).filter(([k]) => k.startsWith('scheduling_') || k.startsWith('offload_')),
  );
  return createHash('sha256').update(canonicalJson(picked)).digest('hex').slice(0, 16);
}

/** This node's model records (ID-1), availability read live from the supervisor (HEALTH-3). */
export function localRecords(registry: ModelRegistry, supervisor: Supervisor): NodeModelRecord[] {
  return registry.all().map((r) => ({
    publicId: r.publicId,
    localId: r.localId,
    backend: r.config.backend,
    capabilities: [...r.config.capabilities],
    lane: supervisor.adapter(r.localId).lane,
    configHash: r.configHash,
    modelHash: r.modelHash,
    contextsize: r.config.contextsize ?? r.config.vllm?.settings.max_model_length ?? null,
    // LLM-1 reads the larger of the two: a config serving concurrently by either setting is not one-at-a-time.
    parallel:
      r.config.parallel === undefined && r.config.vllm?.settings.max_number_sequences === undefined
        ? null
        : Math.max(r.config.parallel ?? 1, r.config.vllm?.settings.max_number_sequences ?? 1),
    engine: r.config.engine ?? null,
    available: supervisor.available(r.localId),
    source: 'config_file' as const,
  }));
}

export function localSnapshot(
  config: NodeConfig,
  version: string,
  startedAt: Date,
  registry: ModelRegistry,
  supervisor: Supervisor,
): NodeSnapshot {
  return {
    nodeId: config.cluster.node_id,
    role: config.cluster.role,
    publicUrl: config.cluster.public_url ?? null,
    version,
    settingsHash: settingsHash(config),
    startedAt: startedAt.toISOString(),
    runtimeStatus: true,
    // ID-1: `source` stays out of what is sent: an older master's strict record schema would refuse the registration,
    // and the master records every member's record as `remote_node` anyway.
    models: localRecords(registry, supervisor).map(({ source: _source, ...wire }) => wire),
  };
}
