import { useEffect } from 'react';
import { REFRESH_INTERVAL_MS, startPolling } from '../../store/polling';
import { useAppStore } from '../../store/use-app-store';
import { Notice } from '../notice';
import { PageHead } from '../page-head';
import { TokenStorageNotice } from '../token-storage-notice';
import { RestartNotice } from './restart-notice';
import { SettingsEditor } from './settings-editor';
import { SlavesCard } from './slaves-card';

/** How often a master's slaves are read while the Settings screen shows them (they show up as soon as polled). */
const SLAVES_REFRESH_MS = 2_000;

const section = (config: Record<string, unknown> | undefined, key: string): Record<string, unknown> => {
  const v = config?.[key];
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
};

/**
 * The Settings screen: the node's own config — role, identity, cluster token, slaves, where it listens,
 * models folder, Redis, lending — written whole; a save restarts the node, and the screen follows it back. Operators only.
 */
export function SettingsPage() {
  const settings = useAppStore((s) => s.settings);
  const fetchSettings = useAppStore((s) => s.fetchSettings);
  const fetchCluster = useAppStore((s) => s.fetchCluster);
  const nodes = useAppStore((s) => s.cluster.nodes);
  const { view, failure } = settings;
  const cluster = section(view?.config, 'cluster');
  const isMaster = cluster.role === 'master';
  const slaveUrls = Array.isArray(cluster.slave_urls) ? cluster.slave_urls.map(String) : [];

  useEffect(() => {
    void fetchSettings();
  }, [fetchSettings]);
  useEffect(
    () => (isMaster ? startPolling(fetchCluster, Math.min(SLAVES_REFRESH_MS, REFRESH_INTERVAL_MS)) : undefined),
    [isMaster, fetchCluster],
  );

  return (
    <section className="page stack-page settings-page" aria-labelledby="settings-title" data-testid="settings-page">
      <PageHead
        id="settings"
        title="Settings"
        fetchedAt={settings.fetchedAt}
        loading={settings.loading || settings.saving}
        onRefresh={() => void fetchSettings()}
        refreshTitle="read the config again (unsaved changes are dropped)"
      />
      <RestartNotice restart={settings.restart} />
      {failure?.code === 'not_an_operator' ? (
        <Notice kind="error" testId="settings-refused">
          This console token is not an operator&apos;s: only operators (<code>console.operators</code>) can read or
          change the node settings.
        </Notice>
      ) : (
        failure && (
          <Notice kind="error" testId="settings-failure">
            {failure.message}
            {view && <span className="muted"> — showing the settings last read</span>}
          </Notice>
        )
      )}
      {view?.restartError && (
        <Notice kind="error" testId="settings-restart-error">
          The new settings could not start: {view.restartError.replace(/\.$/, '')}.{' '}
          {view.restoredFrom ? (
            <>
              The previous settings were restored from <code>{view.restoredFrom}</code> and the node runs on them.
            </>
          ) : (
            'The node runs on the settings before them.'
          )}
        </Notice>
      )}
      {!view && !failure && (
        <Notice kind="info" testId="settings-loading">
          Reading the node settings…
        </Notice>
      )}
      {view && isMaster && <SlavesCard nodes={nodes} slaveUrls={slaveUrls} />}
      {view && <SettingsEditor key={settings.fetchedAt ?? 0} view={view} />}
      <TokenStorageNotice />
    </section>
  );
}
