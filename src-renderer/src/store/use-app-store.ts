import { createContext, useContext } from 'react';
import { useStore } from 'zustand';
import type { AppStore } from './app-store';
import type { AppState } from './types';

export const AppStoreContext = createContext<AppStore | null>(null);

/** Selects from the app store given by <AppStoreContext.Provider>. */
export function useAppStore<T>(selector: (state: AppState) => T): T {
  const store = useContext(AppStoreContext);
  if (!store) throw new Error('useAppStore outside <AppStoreContext.Provider>');
  return useStore(store, selector);
}
