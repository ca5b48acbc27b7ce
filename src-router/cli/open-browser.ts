import { spawn } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { withoutNodeVariables } from '../backends/engine-env';

/**
 * Opens a console link page (`writeLinkPage`) in the desktop's browser: the command in BROWSER, else xdg-open, given
 * the page's file URL as its one argument (a path, no secret); never fails the command.
 */
export function openBrowser(page: string) {
  const child = spawn(process.env.BROWSER || 'xdg-open', [pathToFileURL(page).href], {
    stdio: 'ignore',
    detached: true,
    env: withoutNodeVariables(process.env),
  });
  child.on('error', () => {});
  child.unref();
}
