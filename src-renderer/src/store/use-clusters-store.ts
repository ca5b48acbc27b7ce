import { createContext, useContext } from 'react';
import { useStore } from 'zustand';
import type { ClustersState, ClustersStore } from './clusters-store';

export const ClustersStoreContext = createContext<ClustersStore | null>(null);

/** Selects from the cluster switcher's store given by <ClustersStoreContext.Provider>. */
export function useClustersStore<T>(selector: (state: ClustersState) => T): T {
  const store = useContext(ClustersStoreContext);
  if (!store) throw new Error('useClustersStore outside <ClustersStoreContext.Provider>');
  return useStore(store, selector);
}
