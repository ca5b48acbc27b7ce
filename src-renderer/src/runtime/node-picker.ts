import type { ClusterNodeView } from '../../../src-router/contract';

/** The Runtime screen's node picker: which node's published blob to show. Pure. */

export interface RuntimeNodeOption {
  /** '' is the node that serves the console API (no `?node=`). */
  value: string;
  label: string;
}

/**
 * Every node of the cluster, the serving node first as ''. A picked node the cluster no longer lists stays an option
 * (marked) so the picker never shows another node than the one read. Null when there is nothing to pick.
 */
export function runtimeNodeOptions(nodes: ClusterNodeView[] | null, picked: string | null): RuntimeNodeOption[] | null {
  const list = nodes ?? [];
  const options: RuntimeNodeOption[] = list.map((n) => ({
    value: n.local ? '' : n.nodeId,
    label: n.local ? `${n.nodeId} (this node)` : n.healthy ? n.nodeId : `${n.nodeId} (unhealthy)`,
  }));
  if (picked !== null && !list.some((n) => !n.local && n.nodeId === picked))
    options.push({ value: picked, label: `${picked} (not in the cluster)` });
  return options.length > 1 ? options : null;
}

/** The picker's value back to the slice's `runtimeNode`. */
export const pickedNode = (value: string): string | null => (value === '' ? null : value);
