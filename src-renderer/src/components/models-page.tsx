import { PageHead } from './page-head';
import { useAppStore } from '../store/use-app-store';
import { ModelsEmpty } from './models-empty';
import { ModelsTable } from './models-table';
import { Notice } from './notice';

export function ModelsPage() {
  const models = useAppStore((s) => s.models);
  const refresh = useAppStore((s) => s.refresh);
  const { items, failure, loading, fetchedAt } = models;

  return (
    <section className="page" aria-labelledby="models-title" data-testid="models-page">
      <PageHead id="models" title="Models" count={items?.length} fetchedAt={fetchedAt} loading={loading} onRefresh={() => void refresh()} />

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
      {items && items.length === 0 && <ModelsEmpty />}
      {items && items.length > 0 && <ModelsTable models={items} />}
    </section>
  );
}
