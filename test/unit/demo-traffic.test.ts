import { describe, expect, it } from 'vitest';
import { DEMO_LINKS, DEMO_PRELOADS } from '../../src-router/cli/demo-cluster';
import { demoBurst } from '../../src-router/cli/demo-traffic';

// Issue #15: the demo shows a lease within seconds. While an own request of the helper waits, no lease goes to it
// (HELPER-1), nor a probe until it idled `offload_probe_idle` after (PROBE-3): gpu-b gets no own request in the first
// bursts, and its image model is loaded through the node API instead.
describe('demo traffic', () => {
  it('sends gpu-b no own request before the fourth burst, then now and then', () => {
    for (const k of [0, 1, 2]) expect(demoBurst(k).filter((s) => s.node === 'gpu-b')).toEqual([]);
    expect(
      demoBurst(3)
        .filter((s) => s.node === 'gpu-b')
        .map((s) => s.body.model),
    ).toEqual(['chat-7b']);
    expect(demoBurst(4).filter((s) => s.node === 'gpu-b')).toEqual([]);
  });

  it('loads the image link’s helper model through the node API (gpu-b’s startup model is its text one)', () => {
    const helpers = DEMO_LINKS.filter((l) => l.lane === 'image').map((l) => ({
      node: l.helper.node_id,
      localId: l.helper.model,
    }));
    expect(DEMO_PRELOADS).toEqual(helpers);
  });
});
