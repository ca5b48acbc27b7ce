import { useEffect, useState } from 'react';
import { AppHeader } from './components/app-header';
import { ModelsPage } from './components/models-page';
import { RuntimePage } from './components/runtime/runtime-page';
import { SCREENS, screenFromHash, type ScreenId } from './screens';
import { useAppStore } from './store/use-app-store';
import { REFRESH_INTERVAL_MS, startPolling } from './store/polling';

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
            <a key={s.id} href={`#${s.id}`} aria-current={screen === s.id ? 'page' : undefined} data-testid={`nav-${s.id}`}>
              {s.label}
            </a>
          ))}
        </nav>
        <main className="app-main">{screen === 'runtime' ? <RuntimePage /> : <ModelsPage />}</main>
      </div>
    </div>
  );
}
