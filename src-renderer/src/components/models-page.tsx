import { useEffect } from 'react';
import { catalogRows, showsCatalog } from '../models/catalog-view';
import { REFRESH_INTERVAL_MS, startPolling } from '../store/polling';
import { useAppStore } from '../store/use-app-store';
import { ClusterCatalogTable } from './cluster-catalog-table';
import { ModelsEmpty } from './models-empty';
import { ModelsTable } from './models-table';
import { Notice } from './notice';
import { PageHead } from './page-head';

/** The merged catalog of a master's cluster, then the master's own models when it has any. */
function ClusterModels() {
  const models = useAppStore((s) => s.models);
  const cluster = useAppStore((s) => s.cluster);
  const lanes = useAppStore((s) => s.lanes);
  const nodeId = useAppStore((s) => s.connection.node?.nodeId ?? null);
  const rows = cluster.models ? catalogRows({ catalog: cluster.models, lanes: lanes.nodes, localModels: models.items, localNodeId: nodeId }) : null;
  return (
    <>
      {cluster.modelsFailure && (
        <Notice kind="error" testId="catalog-error">
          Cluster catalog: {cluster.modelsFailure.message}
          {rows && <span className="muted"> — showing the last catalog read</span>}
        </Notice>
      )}
      {lanes.failure && (
        <Notice kind="error" testId="lanes-error">
          Lane state: {lanes.failure.message}
        </Notice>
      )}
      {!rows && !cluster.modelsFailure && (
        <Notice kind="info" testId="catalog-loading">
          Reading the cluster catalog…
        </Notice>
      )}
      {rows && rows.length === 0 && (
        <Notice kind="info" testId="catalog-empty">
          No node of this cluster has models yet.
        </Notice>
      )}
      {rows && rows.length > 0 && <ClusterCatalogTable rows={rows} />}
      {models.items && models.items.length > 0 && (
        <>
          <h2 className="section-title">On this node</h2>
          <ModelsTable models={models.items} />
        </>
      )}
    </>
  );
}

export function ModelsPage() {
  const models = useAppStore((s) => s.models);
  const catalogCount = useAppStore((s) => s.cluster.models?.length);
  const role = useAppStore((s) => s.connection.node?.role);
  const refreshModels = useAppStore((s) => s.refreshModels);
  useEffect(() => startPolling(refreshModels, REFRESH_INTERVAL_MS), [refreshModels]);
  const { items, failure, loading, fetchedAt } = models;
  const catalog = showsCatalog(role);

  return (
    <section className="page" aria-labelledby="models-title" data-testid="models-page">
      <PageHead id="models" title="Models" count={catalog ? catalogCount : items?.length} fetchedAt={fetchedAt} loading={loading} onRefresh={() => void refreshModels()} />

      {failure && (
        <Notice kind="error" testId="models-error">
          {failure.message}
          {items && <span className="muted"> — showing the last list read</span>}
        </Notice>
      )}
      {!items && !failure && (
        <Notice kind="info" testId="models-loading">
          Loading models…
        </Notice>
      )}
      {catalog && <ClusterModels />}
      {!catalog && items && items.length === 0 && <ModelsEmpty />}
      {!catalog && items && items.length > 0 && <ModelsTable models={items} />}
    </section>
  );
}
