import { StrictMode, useEffect } from 'react';
import { createRoot } from 'react-dom/client';
import { clusterFromHref, hrefWithCluster } from './api/cluster-path';
import { App } from './app';
import { connectFromWindow } from './connect-window';
import { createClustersStore } from './store/clusters-store';
import { REFRESH_INTERVAL_MS, startPolling } from './store/polling';
import { AppStoreContext } from './store/use-app-store';
import { ClustersStoreContext, useClustersStore } from './store/use-clusters-store';
import './styles.css';

/** The selected cluster's store; a switch remounts every screen on a fresh store (no state of the previous one). */
function ConsoleRoot() {
  const session = useClustersStore((s) => s.session);
  const selected = useClustersStore((s) => s.selected);
  const fetchClusters = useClustersStore((s) => s.fetchClusters);
  useEffect(() => startPolling(fetchClusters, REFRESH_INTERVAL_MS), [fetchClusters]);
  return (
    <AppStoreContext.Provider value={session} key={selected}>
      <App />
    </AppStoreContext.Provider>
  );
}

// The connection first (a one-time code in the address is exchanged for the token), then the stores and screens.
void connectFromWindow(window).then((connection) => {
  const clusters = createClustersStore(
    {
      url: connection.url,
      token: connection.token,
      fetch: (input, init) => fetch(input, init),
      now: Date.now,
      // The address keeps the selected cluster, so a reload stays there.
      onSelect: (id) =>
        window.history.replaceState(window.history.state, '', hrefWithCluster(window.location.href, id)),
      // In the desktop app the window follows a moved node itself (Electron main reloads it, the preload has the token).
      ...(connection.source === 'preload' ? {} : { navigate: (href: string) => window.location.assign(href) }),
    },
    clusterFromHref(window.location.href),
  );
  createRoot(document.getElementById('root')!).render(
    <StrictMode>
      <ClustersStoreContext.Provider value={clusters}>
        <ConsoleRoot />
      </ClustersStoreContext.Provider>
    </StrictMode>,
  );
});
