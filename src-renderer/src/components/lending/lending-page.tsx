import { useEffect } from 'react';
import { modelOptions, nodeOptions } from '../../lending/decision-filters';
import { REFRESH_INTERVAL_MS, startPolling } from '../../store/polling';
import { useAppStore } from '../../store/use-app-store';
import { Notice } from '../notice';
import { PageHead } from '../page-head';
import { NodeBuildsCard, SettingsCard } from './cluster-settings-cards';
import { DecisionFiltersForm } from './decision-filters-form';
import { DecisionLog } from './decision-log';
import { ExportButton } from './export-button';
import { GuardiansCard } from './guardians-card';
import { LeasesCard } from './leases-card';
import { ReplayCard } from './replay-card';
import { TimelineCard } from './timeline-card';

/**
 * The Lending screen (UI-1, UI-4, UI-6): live leases, node builds and settings sync, the settings, the guardian
 * settings (the only writes here), and the decision log gathered from every node, folded, filtered, paged and exported.
 */
export function LendingPage() {
  const lending = useAppStore((s) => s.lending);
  const models = useAppStore((s) => s.cluster.models);
  const refreshLending = useAppStore((s) => s.refreshLending);
  const loadDecisions = useAppStore((s) => s.loadDecisions);
  const loading = useAppStore((s) => s.decisions.loading || s.lending.loading);
  useEffect(() => startPolling(refreshLending, REFRESH_INTERVAL_MS), [refreshLending]);
  const guardians = useAppStore((s) => s.guardians);
  const { view } = lending;

  return (
    <section className="page stack-page" aria-labelledby="lending-title" data-testid="lending-page">
      <PageHead
        id="lending"
        title="Lending"
        fetchedAt={lending.fetchedAt}
        loading={loading}
        onRefresh={() => void refreshLending()}
      />
      {lending.failure && (
        <Notice kind="error" testId="lending-error">
          {lending.failure.message}
          {view && <span className="muted"> — showing the last state read</span>}
        </Notice>
      )}
      {view && (
        <>
          <LeasesCard view={view} />
          <div className="lending-split">
            <NodeBuildsCard view={view} />
            <SettingsCard view={view} />
          </div>
        </>
      )}
      <TimelineCard />
      <ReplayCard />
      {guardians.failure && (
        <Notice kind="error" testId="guardians-error">
          guardian settings: {guardians.failure.message}
          {guardians.view && <span className="muted"> — showing the last state read</span>}
        </Notice>
      )}
      {guardians.view && <GuardiansCard view={guardians.view} />}
      <div className="card" data-testid="decision-log">
        <div className="card-head">
          <h2>Decision log</h2>
          <span className="muted small">every node, newest first; repeats folded</span>
          <span className="spacer" />
          <ExportButton />
        </div>
        <DecisionFiltersForm
          nodes={nodeOptions(view?.nodes)}
          models={modelOptions(models)}
          onApply={(q) => void loadDecisions(q)}
        />
        <DecisionLog />
      </div>
    </section>
  );
}
