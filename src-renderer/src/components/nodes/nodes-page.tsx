import { useEffect } from 'react';
import { nodeCards } from '../../nodes/nodes-view';
import { REFRESH_INTERVAL_MS, startPolling } from '../../store/polling';
import { useAppStore } from '../../store/use-app-store';
import { Notice } from '../notice';
import { PageHead } from '../page-head';
import { NodeCard } from './node-card';

/** The Nodes screen (UI-2): every node of the cluster, its health, build, settings sync and requests. Reads only. */
export function NodesPage() {
  const cluster = useAppStore((s) => s.cluster);
  const lending = useAppStore((s) => s.lending);
  const refreshNodes = useAppStore((s) => s.refreshNodes);
  useEffect(() => startPolling(refreshNodes, REFRESH_INTERVAL_MS), [refreshNodes]);
  const cards = cluster.nodes
    ? nodeCards(cluster.nodes, lending.view, lending.fetchedAt ?? cluster.fetchedAt ?? 0)
    : null;
  const busy = cluster.loading || lending.loading;

  return (
    <section className="page stack-page" aria-labelledby="nodes-title" data-testid="nodes-page">
      <PageHead
        id="nodes"
        title="Nodes"
        count={cards?.length}
        fetchedAt={lending.fetchedAt ?? cluster.fetchedAt}
        loading={busy}
        onRefresh={() => void refreshNodes()}
      />
      {cluster.failure && (
        <Notice kind="error" testId="nodes-error">
          {cluster.failure.message}
          {cluster.nodes && <span className="muted"> — showing the last list read</span>}
        </Notice>
      )}
      {lending.failure && (
        <Notice kind="error" testId="nodes-lending-error">
          Held requests: {lending.failure.message}
        </Notice>
      )}
      {!cards && !cluster.failure && (
        <Notice kind="info" testId="nodes-loading">
          Reading the cluster…
        </Notice>
      )}
      {cards?.map((n) => (
        <NodeCard key={n.nodeId} node={n} />
      ))}
    </section>
  );
}
