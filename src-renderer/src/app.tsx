import { useEffect, useState } from 'react';
import { clusterProblem } from './clusters/switcher-view';
import { AccessNotice } from './components/access-notice';
import { AppHeader } from './components/app-header';
import { LendingPage } from './components/lending/lending-page';
import { LinksPage } from './components/links/links-page';
import { ModelsPage } from './components/models-page';
import { NodesPage } from './components/nodes/nodes-page';
import { Notice } from './components/notice';
import { RuntimePage } from './components/runtime/runtime-page';
import { SettingsPage } from './components/settings/settings-page';
import { SCREENS, type ScreenId, screenFromHash } from './screens';
import { REFRESH_INTERVAL_MS, startPolling } from './store/polling';
import { useAppStore } from './store/use-app-store';
import { useClustersStore } from './store/use-clusters-store';

/** The screen the address names; follows back/forward and the nav links. */
function useScreen(): ScreenId {
  const [screen, setScreen] = useState<ScreenId>(() => screenFromHash(window.location.hash));
  useEffect(() => {
    const onHash = () => setScreen(screenFromHash(window.location.hash));
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);
  return screen;
}

function Screen({ id }: { id: ScreenId }) {
  switch (id) {
    case 'nodes':
      return <NodesPage />;
    case 'lending':
      return <LendingPage />;
    case 'links':
      return <LinksPage />;
    case 'runtime':
      return <RuntimePage />;
    case 'settings':
      return <SettingsPage />;
    default:
      return <ModelsPage />;
  }
}

/** The selected remote cluster cannot be reached: said once above every screen (each screen also says what it lacks). */
function ClusterProblem() {
  const list = useClustersStore((s) => s.list);
  const selected = useClustersStore((s) => s.selected);
  const failure = useAppStore((s) => s.connection.failure);
  const problem = clusterProblem(list, selected, failure);
  if (!problem) return null;
  return (
    <Notice kind="error" testId="cluster-unreachable">
      {problem} <span className="muted">— the screens show what was last read from it, if anything</span>
    </Notice>
  );
}

export function App() {
  const refresh = useAppStore((s) => s.refresh);
  useEffect(() => startPolling(refresh, REFRESH_INTERVAL_MS), [refresh]);
  const screen = useScreen();

  return (
    <div className="app">
      <AppHeader />
      <div className="app-body">
        <nav className="side-nav" aria-label="Screens">
          {SCREENS.map((s) => (
            <a
              key={s.id}
              href={`#${s.id}`}
              aria-current={screen === s.id ? 'page' : undefined}
              data-testid={`nav-${s.id}`}
            >
              {s.label}
            </a>
          ))}
        </nav>
        <main className="app-main">
          <AccessNotice />
          <ClusterProblem />
          <Screen id={screen} />
        </main>
      </div>
    </div>
  );
}
