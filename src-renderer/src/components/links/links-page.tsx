import { useEffect } from 'react';
import { LANES } from '../../links/links-view';
import { REFRESH_INTERVAL_MS, startPolling } from '../../store/polling';
import { useAppStore } from '../../store/use-app-store';
import { Notice } from '../notice';
import { PageHead } from '../page-head';
import { LinkPicker } from './link-picker';
import { LinksTable } from './links-table';

/** The Links screen (UI-3, LINK-1..4): per lane, the stored links with their flags, and the picker for a new one. */
export function LinksPage() {
  const links = useAppStore((s) => s.links);
  const models = useAppStore((s) => s.cluster.models);
  const modelsFailure = useAppStore((s) => s.cluster.modelsFailure);
  const refreshLinks = useAppStore((s) => s.refreshLinks);
  useEffect(() => startPolling(refreshLinks, REFRESH_INTERVAL_MS), [refreshLinks]);
  const loading = links.text.loading || links.image.loading;

  return (
    <section className="page stack-page" aria-labelledby="links-title" data-testid="links-page">
      <PageHead
        id="links"
        title="Links"
        fetchedAt={links.text.fetchedAt}
        loading={loading}
        onRefresh={() => void refreshLinks()}
      />
      {modelsFailure && (
        <Notice kind="error" testId="links-models-error">
          Cluster catalog: {modelsFailure.message}
        </Notice>
      )}
      {LANES.map(({ lane, title, path, hint }) => {
        const state = links[lane];
        return (
          <div key={lane} className="card lane-card" data-testid={`lane-${lane}`}>
            <div className="card-head">
              <h2>{title}</h2>
              {state.list && <span className="count">{state.list.links.length}</span>}
              <span className="muted small mono">{path}</span>
              <span className="spacer" />
              {state.list && <span className="muted small">version {state.list.version}</span>}
            </div>
            <p className="muted small lane-hint">{hint}</p>
            {state.failure && <p className="error-text small">{state.failure.message}</p>}
            {state.list && <LinksTable lane={lane} links={state.list.links} />}
            <LinkPicker lane={lane} models={models} />
          </div>
        );
      })}
    </section>
  );
}
