import { useEffect } from 'react';
import { formatClock } from '../../format';
import { runtimeSections } from '../../runtime/runtime-view';
import { REFRESH_INTERVAL_MS, startPolling } from '../../store/polling';
import { useAppStore } from '../../store/use-app-store';
import { Notice } from '../notice';
import { GaugeCards } from './gauge-cards';
import { RoutingCard } from './routing-card';
import { RuntimeBanner } from './runtime-banner';
import { SelfTestsCard } from './self-tests-card';
import { ServingConfigCard } from './serving-config-card';

/**
 * The Runtime screen (RT-1..6): the published runtime blob, then the Routing card. Everything here is a read;
 * Refresh re-reads (it does not re-run diagnostics, and shows no progress but the read's own).
 */
export function RuntimePage() {
  const runtime = useAppStore((s) => s.runtime);
  const refreshRuntime = useAppStore((s) => s.refreshRuntime);
  useEffect(() => startPolling(refreshRuntime, REFRESH_INTERVAL_MS), [refreshRuntime]);
  const { health, failure, loading, fetchedAt } = runtime;
  const sections = health ? runtimeSections(health) : null;

  return (
    <section className="page runtime-page" aria-labelledby="runtime-title" data-testid="runtime-page">
      <div className="page-head">
        <h1 id="runtime-title">Runtime</h1>
        <span className="spacer" />
        <span className="muted small" data-testid="runtime-updated">
          updated {formatClock(fetchedAt)}
        </span>
        <button type="button" onClick={() => void refreshRuntime()} disabled={loading} data-testid="runtime-refresh" title="Re-read the published runtime blob">
          Refresh
        </button>
      </div>

      {failure && (
        <Notice kind="error" testId="runtime-error">
          {failure.message}
          {health && <span className="muted"> — showing the last blob read</span>}
        </Notice>
      )}
      {!health && !failure && (
        <Notice kind="info" testId="runtime-loading">
          Reading the runtime blob…
        </Notice>
      )}
      {sections && !sections.published && (
        <Notice kind="info" testId="runtime-not-published">
          {sections.note}
          {sections.reason && <span className="muted"> ({sections.reason})</span>}
        </Notice>
      )}
      {sections?.published && (
        <>
          <RuntimeBanner blob={sections.blob} />
          <GaugeCards blob={sections.blob} />
          <div className="runtime-split">
            <SelfTestsCard tests={sections.blob.selfTests} />
            <ServingConfigCard config={sections.blob.servingConfig} />
          </div>
        </>
      )}
      <RoutingCard />
    </section>
  );
}
