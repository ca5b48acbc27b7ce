import { accessHelp } from '../access-help';
import { LOCAL_CLUSTER } from '../api/cluster-path';
import { useAppStore } from '../store/use-app-store';
import { useClustersStore } from '../store/use-clusters-store';

/** Above every screen when this node's console cannot get in: what happened and the ways back in. */
export function AccessNotice() {
  const status = useAppStore((s) => s.connection.status);
  const selected = useClustersStore((s) => s.selected);
  const help = selected === LOCAL_CLUSTER ? accessHelp(status) : null;
  if (!help) return null;
  return (
    <div className="notice notice-error" data-testid="access-help" role="alert">
      <p>{help.what}</p>
      <ul>
        {help.ways.map((w) => (
          <li key={w.how}>
            {w.how} {w.command && <code>{w.command}</code>}
          </li>
        ))}
      </ul>
    </div>
  );
}
