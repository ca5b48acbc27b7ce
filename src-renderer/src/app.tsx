import { useEffect } from 'react';
import { AppHeader } from './components/app-header';
import { ModelsPage } from './components/models-page';
import { useAppStore } from './store/use-app-store';
import { REFRESH_INTERVAL_MS, startPolling } from './store/polling';

export function App() {
  const refresh = useAppStore((s) => s.refresh);
  useEffect(() => startPolling(refresh, REFRESH_INTERVAL_MS), [refresh]);

  return (
    <div className="app">
      <AppHeader />
      <div className="app-body">
        <nav className="side-nav" aria-label="Screens">
          <a href="#models" aria-current="page" data-testid="nav-models">
            Models
          </a>
        </nav>
        <main className="app-main">
          <ModelsPage />
        </main>
      </div>
    </div>
  );
}
