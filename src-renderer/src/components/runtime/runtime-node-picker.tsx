import { pickedNode, runtimeNodeOptions } from '../../runtime/node-picker';
import { useAppStore } from '../../store/use-app-store';

/** Which node's published blob the screen shows; the Routing card below stays the cluster's. */
export function RuntimeNodePicker() {
  const nodes = useAppStore((s) => s.cluster.nodes);
  const picked = useAppStore((s) => s.runtimeNode);
  const pick = useAppStore((s) => s.pickRuntimeNode);
  const options = runtimeNodeOptions(nodes, picked);
  if (!options) return null;
  return (
    <label className="runtime-node-picker">
      <span className="muted small">node</span>{' '}
      <select data-testid="runtime-node" value={picked ?? ''} onChange={(e) => void pick(pickedNode(e.target.value))}>
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </label>
  );
}
