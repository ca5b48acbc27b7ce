import { describe, expect, it } from 'vitest';
import { type RoundRobin, type SttNode, selectStt, unseenReservations } from '../../src-router/cluster/stt-select';

const node = (nodeId: string, o: Partial<SttNode> = {}, configs: [string, boolean][] = [['w', false]]): SttNode => ({
  nodeId,
  local: false,
  healthy: true,
  runtimeStatus: true,
  active: 0,
  queued: 0,
  configs: configs.map(([localId, loaded]) => ({ localId, clusterId: 'whisper', loaded })),
  ...o,
});
const pick = (nodes: SttNode[], rr: RoundRobin = new Map()) => {
  const c = selectStt(nodes, rr);
  return c && `${c.nodeId}/${c.config.localId}/${c.rule}`;
};

describe('selector-less STT scheduling (STT-1..5)', () => {
  it('1. a loaded local STT config comes first, even when the local node is busy', () => {
    expect(pick([node('m', { local: true, active: 5, queued: 3 }, [['w', true]]), node('a', {}, [['w', true]])])).toBe(
      'm/w/local_loaded',
    );
  });

  it('2. then a loaded healthy remote with the shortest whole-node active+queued', () => {
    const nodes = [
      node('m', { local: true }, [['w', false]]),
      node('a', { active: 2, queued: 1 }, [['w', true]]),
      node('b', { active: 1, queued: 1 }, [['w', true]]),
      node('c', { active: 0 }, [['w', false]]),
    ];
    expect(pick(nodes)).toBe('b/w/remote_loaded');
  });

  it('an unhealthy remote or one without runtime status takes no part (STT-5)', () => {
    expect(
      pick([
        node('a', { healthy: false }, [['w', true]]),
        node('b', { runtimeStatus: false }, [['w', true]]),
        node('c', { active: 3 }),
      ]),
    ).toBe('c/w/shortest_remote_queue');
  });

  it('3. then a wholly idle capable node (local or remote)', () => {
    expect(
      pick([node('m', { local: true, active: 1 }), node('a', { active: 0, queued: 0 }), node('b', { active: 1 })]),
    ).toBe('a/w/idle_node');
    expect(pick([node('m', { local: true }), node('a', { active: 1 })])).toBe('m/w/idle_node');
  });

  it('4. all busy: the local queue when this node has an STT config', () => {
    expect(pick([node('m', { local: true, active: 4 }), node('a', { active: 1 })])).toBe('m/w/local_queue');
  });

  it('all busy and no local config: the shortest remote whole-node queue', () => {
    expect(
      pick([
        node('m', { local: true }, []),
        node('a', { active: 1, queued: 3 }),
        node('b', { active: 2, queued: 1 }),
        node('c', { active: 5, queued: 1 }),
      ]),
    ).toBe('b/w/shortest_remote_queue');
  });

  it('nothing capable → no route', () => {
    expect(pick([node('m', { local: true }, []), node('a', { healthy: false })])).toBeUndefined();
  });

  it('equal candidates rotate round-robin, per rule', () => {
    const rr: RoundRobin = new Map();
    const idle = [node('a'), node('b'), node('c')];
    expect([1, 2, 3, 4].map(() => pick(idle, rr))).toEqual([
      'a/w/idle_node',
      'b/w/idle_node',
      'c/w/idle_node',
      'a/w/idle_node',
    ]);
    const loaded = [node('a', { active: 1 }, [['w', true]]), node('b', { active: 1 }, [['w', true]])];
    expect([1, 2, 3].map(() => pick(loaded, rr))).toEqual([
      'a/w/remote_loaded',
      'b/w/remote_loaded',
      'a/w/remote_loaded',
    ]);
    const twoLocal = [
      node('m', { local: true }, [
        ['w1', true],
        ['w2', true],
      ]),
    ];
    expect([1, 2].map(() => pick(twoLocal, rr))).toEqual(['m/w1/local_loaded', 'm/w2/local_loaded']);
  });

  it('a reservation counts as work: two simultaneous requests spread over two idle nodes (STT-4)', () => {
    // Fresh cursors each time, so only the reservation can move the second request.
    const nodes = [node('a'), node('b')];
    const first = selectStt(nodes, new Map())!;
    expect(selectStt(nodes, new Map())!.nodeId).toBe(first.nodeId); // without a reservation: the same node again
    nodes.find((n) => n.nodeId === first.nodeId)!.active++; // reserved before its configuration loads
    const second = selectStt(nodes, new Map())!;
    expect(new Set([first.nodeId, second.nodeId])).toEqual(new Set(['a', 'b']));
  });

  it('a reservation moves a loaded-remote tie too', () => {
    const nodes = [node('a', {}, [['w', true]]), node('b', { active: 1 }, [['w', true]])];
    expect(selectStt(nodes, new Map())!.nodeId).toBe('a');
    nodes[0].active += 2;
    expect(selectStt(nodes, new Map())!.nodeId).toBe('b');
  });

  it('input order does not matter', () => {
    const a = [node('b', { active: 1 }, [['w', true]]), node('a', { active: 1 }, [['w', true]])];
    expect(pick(a)).toBe(pick([...a].reverse()));
  });

  it('a reservation counts only until the node counts the request itself (STT-2, STT-4)', () => {
    expect(unseenReservations(1, 0)).toBe(1);
    expect(unseenReservations(2, 1)).toBe(1);
    expect(unseenReservations(2, 2)).toBe(0);
    expect(unseenReservations(1, 3)).toBe(0);
    expect(unseenReservations(0, 0)).toBe(0);
  });
});
