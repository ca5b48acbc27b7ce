import { useEffect, useState } from 'react';
import type { ConsoleModel } from '../../../src-router/contract';
import { LOCAL_CLUSTER } from '../api/cluster-path';
import { configStem, type ModelConfigEntry } from '../api/model-config-wire';
import { catalogRows, showsCatalog } from '../models/catalog-view';
import { REFRESH_INTERVAL_MS, startPolling } from '../store/polling';
import { useAppStore } from '../store/use-app-store';
import { useClustersStore } from '../store/use-clusters-store';
import { ClusterCatalogTable } from './cluster-catalog-table';
import { ModelDialog } from './models/model-dialog';
import { RemoveModelDialog } from './models/remove-model-dialog';
import { ModelsEmpty } from './models-empty';
import { ModelsTable, type RowActions } from './models-table';
import { Notice } from './notice';
import { PageHead } from './page-head';

/** The merged catalog of a master's cluster, then the master's own models when it has any. */
function ClusterModels({ actions }: { actions?: RowActions }) {
  const models = useAppStore((s) => s.models);
  const cluster = useAppStore((s) => s.cluster);
  const lanes = useAppStore((s) => s.lanes);
  const nodeId = useAppStore((s) => s.connection.node?.nodeId ?? null);
  const rows = cluster.models
    ? catalogRows({ catalog: cluster.models, lanes: lanes.nodes, localModels: models.items, localNodeId: nodeId })
    : null;
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
          <ModelsTable models={models.items} actions={actions} />
        </>
      )}
    </>
  );
}

type Open =
  | { kind: 'add' }
  | { kind: 'edit'; entry: ModelConfigEntry }
  | { kind: 'remove'; model: ConsoleModel; configName: string }
  | null;

/** Config files of the models folder that do not parse: the last good config stays in force. */
function ConfigErrors() {
  const list = useAppStore((s) => s.modelConfigs.value);
  const broken = (list?.configs ?? []).filter((c) => c.error);
  if (!broken.length) return null;
  return (
    <Notice kind="error" testId="model-config-errors">
      Model config files the node could not take in (fix them in an editor, or with Edit on their row):
      <ul className="model-config-errors">
        {broken.map((c) => (
          <li key={c.file} data-testid="model-config-error" data-file={c.file}>
            <code>{c.file}</code>: {c.error!.path ? <code>{c.error!.path}</code> : null} {c.error!.message}
            {c.in_force ? <span className="muted"> (the last good config stays in force)</span> : null}
          </li>
        ))}
      </ul>
    </Notice>
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
  const configs = useAppStore((s) => s.modelConfigs);
  const local = useClustersStore((s) => s.selected === LOCAL_CLUSTER);
  const [open, setOpen] = useState<Open>(null);
  // The console may change models when it may read the models folder (operators); a slave's are its own as well.
  const writable = configs.value !== null;
  const entryOf = (m: ConsoleModel) => configs.value?.configs.find((c) => configStem(c.file) === m.localId && c.config);
  const actions: RowActions | undefined = writable
    ? (m) => {
        const entry = entryOf(m);
        return (
          <span className="row-actions">
            <button
              type="button"
              disabled={!entry}
              title={entry ? undefined : 'no config file of this name in the models folder'}
              onClick={() => entry && setOpen({ kind: 'edit', entry })}
              data-testid="model-edit"
            >
              Edit
            </button>
            <button
              type="button"
              className="danger"
              disabled={!entry}
              onClick={() => entry && setOpen({ kind: 'remove', model: m, configName: configStem(entry.file) })}
              data-testid="model-remove"
            >
              Remove
            </button>
          </span>
        );
      }
    : undefined;

  return (
    <section className="page" aria-labelledby="models-title" data-testid="models-page">
      <PageHead
        id="models"
        title="Models"
        count={catalog ? catalogCount : items?.length}
        fetchedAt={fetchedAt}
        loading={loading}
        onRefresh={() => void refreshModels()}
        actions={
          writable && (
            <button type="button" className="primary" onClick={() => setOpen({ kind: 'add' })} data-testid="add-model">
              Add model
            </button>
          )
        }
      />
      <ConfigErrors />

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
      {catalog && <ClusterModels actions={actions} />}
      {!catalog && items && items.length === 0 && (
        <ModelsEmpty onAdd={writable ? () => setOpen({ kind: 'add' }) : undefined} />
      )}
      {!catalog && items && items.length > 0 && <ModelsTable models={items} actions={actions} />}
      {open?.kind === 'add' && <ModelDialog native={local} onClose={() => setOpen(null)} />}
      {open?.kind === 'edit' && <ModelDialog native={local} editing={open.entry} onClose={() => setOpen(null)} />}
      {open?.kind === 'remove' && (
        <RemoveModelDialog model={open.model} configName={open.configName} onClose={() => setOpen(null)} />
      )}
    </section>
  );
}
