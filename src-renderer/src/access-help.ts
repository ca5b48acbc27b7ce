import type { ConnectionStatus } from './store/connection-slice';

/**
 * What the console says when it cannot get in (no token sent, or the node refused it): what happened, and the ways
 * back in that exist — none of them needs a restart. Pure; tested in renderer-access-help.test.ts.
 */
export interface AccessHelp {
  what: string;
  ways: { how: string; command?: string }[];
}

export function accessHelp(status: ConnectionStatus): AccessHelp | null {
  if (status !== 'no-token' && status !== 'rejected') return null;
  return {
    what:
      status === 'no-token'
        ? 'This page has no console token: it was opened without a link, or with a one-time link that was already used or has expired.'
        : "The node refused this page's console token: the token changed (in Settings, or a node that makes a new one at each start restarted), or the page belongs to another node.",
    ways: [
      {
        how: "For routerdesk serve, run this on the node's machine, as its user, in any shell, and open the link it prints (FOLDER: serve's folder, .routerdesk by default):",
        command: 'routerdesk console-link --dir FOLDER',
      },
      {
        how: 'For a node started with a config file, the same with its file:',
        command: 'routerdesk console-link --config FILE',
      },
      { how: 'In the terminal running routerdesk serve, press Enter for a new link.' },
      { how: 'The desktop app always opens its own console.' },
    ],
  };
}
