import { useEffect } from 'react';
import { runtimeSections } from '../../runtime/runtime-view';
import { REFRESH_INTERVAL_MS, startPolling } from '../../store/polling';
import { useAppStore } from '../../store/use-app-store';
import { Notice } from '../notice';
import { PageHead } from '../page-head';
import { BenchRunsCard } from './bench-runs-card';
import { EnginesCard } from './engines-card';
import { GaugeCards } from './gauge-cards';
import { RoutingCard } from './routing-card';
import { RuntimeBanner } from './runtime-banner';
import { RuntimeNodePicker } from './runtime-node-picker';
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
      <PageHead
        id="runtime"
        title="Runtime"
        fetchedAt={fetchedAt}
        loading={loading}
        onRefresh={() => void refreshRuntime()}
        refreshTitle="Re-read the published runtime blob"
      />
      <RuntimeNodePicker />

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
          {sections.malformedNote && (
            <Notice kind="info" testId="runtime-malformed">
              {sections.malformedNote}
            </Notice>
          )}
          <RuntimeBanner blob={sections.blob} />
          <GaugeCards blob={sections.blob} />
          <div className="runtime-split">
            <SelfTestsCard tests={sections.blob.selfTests} />
            <ServingConfigCard config={sections.blob.servingConfig} />
          </div>
        </>
      )}
      <EnginesCard />
      <RoutingCard />
      <BenchRunsCard />
    </section>
  );
}
