/** The app's screens and their addresses (`#models`, `#nodes`, …); anything else is the first screen. Pure. */

export const SCREENS = [
  { id: 'models', label: 'Models' },
  { id: 'nodes', label: 'Nodes' },
  { id: 'lending', label: 'Lending' },
  { id: 'links', label: 'Links' },
  { id: 'runtime', label: 'Runtime' },
  { id: 'settings', label: 'Settings' },
] as const;

export type ScreenId = (typeof SCREENS)[number]['id'];

export function screenFromHash(hash: string): ScreenId {
  const id = hash.replace(/^#\/?/, '').split(/[/?]/)[0];
  return SCREENS.find((s) => s.id === id)?.id ?? 'models';
}
