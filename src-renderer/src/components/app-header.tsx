import { formatUptime, orDash } from '../format';
import type { ConnectionStatus } from '../store/connection-slice';
import { useAppStore } from '../store/use-app-store';
import { ClusterSwitcher } from './clusters/cluster-switcher';

const STATUS_LABEL: Record<ConnectionStatus, string> = {
  connecting: 'connecting…',
  online: 'online',
  'no-token': 'no token sent',
  rejected: 'token rejected',
  offline: 'unreachable',
};

export function AppHeader() {
  const connection = useAppStore((s) => s.connection);
  const { node, status } = connection;
  return (
    <header className="app-header" data-testid="app-header">
      <span className="brand">Routerdesk</span>
      <ClusterSwitcher />
      <dl className="node-facts">
        <div>
          <dt>node</dt>
          <dd data-testid="node-id">{orDash(node?.nodeId)}</dd>
        </div>
        <div>
          <dt>role</dt>
          <dd data-testid="node-role">{orDash(node?.role)}</dd>
        </div>
        <div>
          <dt>version</dt>
          <dd data-testid="node-version">{orDash(node?.version)}</dd>
        </div>
        <div>
          <dt>up</dt>
          <dd data-testid="node-uptime">{formatUptime(node?.startedAt, connection.lastOkAt ?? Date.now())}</dd>
        </div>
      </dl>
      <span className={`conn conn-${status}`} data-testid="connection-status" title={connection.url}>
        {STATUS_LABEL[status]}
      </span>
    </header>
  );
}
