import type { SettingsState } from '../../store/settings-slice';
import { Notice } from '../notice';

/** What happened to the node after a save that restarted it. */
export function RestartNotice({ restart }: { restart: SettingsState['restart'] }) {
  switch (restart.phase) {
    case 'waiting':
      return (
        <Notice kind="info" testId="settings-restarting">
          Saved. The node is restarting on its new settings; waiting for it to answer at <code>{restart.url}</code>…
        </Notice>
      );
    case 'back':
      return (
        <Notice kind="info" testId="settings-restarted">
          Saved. The node restarted on its new settings and answers again at <code>{restart.url}</code>.
        </Notice>
      );
    case 'restored':
      // The page's restart-error notice says why and what runs now.
      return null;
    case 'moving':
      return (
        <Notice kind="info" testId="settings-moving">
          Saved. The node is restarting at <code>{restart.url}</code>; this page follows it there as soon as it answers…
        </Notice>
      );
    case 'moved':
      return (
        <Notice kind="info" testId="settings-moved">
          Saved. The node restarts at <a href={restart.link ?? `${restart.url}/#settings`}>{restart.url}</a>: open the
          console there
          {restart.link?.includes('?code=')
            ? ' (the link works once, within 10 minutes; later, run routerdesk console-link on the node’s machine).'
            : ' (with a new link: run routerdesk console-link on the node’s machine).'}
        </Notice>
      );
    case 'timeout':
      return (
        <Notice kind="error" testId="settings-restart-timeout">
          Saved, but {restart.message}.
        </Notice>
      );
    default:
      return null;
  }
}
