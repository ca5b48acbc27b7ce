import { formatClock } from '../format';
import { useAppStore } from '../store/use-app-store';
import { ModelsTable } from './models-table';
import { Notice } from './notice';

export function ModelsPage() {
  const models = useAppStore((s) => s.models);
  const refresh = useAppStore((s) => s.refresh);
  const { items, failure, loading, fetchedAt } = models;

  return (
    <section className="page" aria-labelledby="models-title" data-testid="models-page">
      <div className="page-head">
        <h1 id="models-title">Models</h1>
        {items && <span className="count" data-testid="models-count">{items.length}</span>}
        <span className="spacer" />
        <span className="muted small" data-testid="models-updated">
          updated {formatClock(fetchedAt)}
        </span>
        <button type="button" onClick={() => void refresh()} disabled={loading} data-testid="models-refresh">
          {loading ? 'Refreshing…' : 'Refresh'}
        </button>
      </div>

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
      {items && items.length === 0 && (
        <Notice kind="info" testId="models-empty">
          This node has no models. Add model configs to <code>models.config_dir</code>.
        </Notice>
      )}
      {items && items.length > 0 && <ModelsTable models={items} />}
    </section>
  );
}
