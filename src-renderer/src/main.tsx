import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app';
import { connectFromWindow } from './connect-window';
import { createConsoleStore } from './store/app-store';
import { AppStoreContext } from './store/use-app-store';
import './styles.css';

const store = createConsoleStore(connectFromWindow(window));

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <AppStoreContext.Provider value={store}>
      <App />
    </AppStoreContext.Provider>
  </StrictMode>,
);
