import { describe, expect, it } from 'vitest';
import {
  activeFilterCount,
  type DecisionFilterDraft,
  decisionQuery,
  EMPTY_FILTER,
  EVENTS_BY_KIND,
  eventOptions,
  localTimeMs,
  modelOptions,
  nodeOptions,
} from '../../src-renderer/src/lending/decision-filters';
import type { ClusterModel } from '../../src-router/contract';

// The decision log's filters → the query string of GET /router/v1/console/decisions and its export (UI-1, UI-6).

const NOW = 1_700_000_000_000;
const draft = (over: Partial<DecisionFilterDraft>): DecisionFilterDraft => ({ ...EMPTY_FILTER, ...over });
const query = (over: Partial<DecisionFilterDraft>) => {
  const plan = decisionQuery(draft(over), NOW);
  if (!plan.ok) throw new Error(plan.message);
  return plan.query;
};

describe('filters → query string', () => {
  it('no filter: the whole log (empty query)', () => {
    expect(decisionQuery(EMPTY_FILTER, NOW)).toEqual({ ok: true, query: '' });
  });

  it('a relative range is from = now - range; any time sends no bound', () => {
    expect(query({ range: '15m' })).toBe(`from=${NOW - 15 * 60_000}`);
    expect(query({ range: '1h' })).toBe(`from=${NOW - 3_600_000}`);
    expect(query({ range: '24h' })).toBe(`from=${NOW - 86_400_000}`);
    expect(query({ range: 'all', from: '2025-01-01T00:00', to: '2025-01-02T00:00' })).toBe('');
  });

  it('a custom range sends local times as unix ms; either end may stay open', () => {
    const from = new Date(2025, 0, 2, 14, 3).getTime();
    const to = new Date(2025, 0, 2, 15, 0, 30).getTime();
    expect(query({ range: 'custom', from: '2025-01-02T14:03', to: '2025-01-02T15:00:30' })).toBe(
      `from=${from}&to=${to}`,
    );
    expect(query({ range: 'custom', from: '', to: '2025-01-02T15:00:30' })).toBe(`to=${to}`);
    expect(query({ range: 'custom' })).toBe('');
  });

  it('a custom range that cannot be read, or ends before it starts, names the field and sends nothing', () => {
    expect(decisionQuery(draft({ range: 'custom', from: 'yesterday' }), NOW)).toEqual({
      ok: false,
      field: 'from',
      message: 'The start of the range is not a date and time.',
    });
    expect(decisionQuery(draft({ range: 'custom', to: '2025-02-30T10:00' }), NOW)).toMatchObject({
      ok: false,
      field: 'to',
    });
    expect(decisionQuery(draft({ range: 'custom', from: '2025-01-02T15:00', to: '2025-01-02T14:00' }), NOW)).toEqual({
      ok: false,
      field: 'to',
      message: 'The range must start before it ends.',
    });
    expect(
      decisionQuery(draft({ range: 'custom', from: '2025-01-02T15:00', to: '2025-01-02T15:00' }), NOW),
    ).toMatchObject({ ok: false });
  });

  it('node, model, kind, event, outcome and reason, in a fixed order, trimmed and encoded', () => {
    expect(
      query({
        reason: 'cost_rejected',
        outcome: 'skipped',
        kind: 'plan',
        model: ' a ',
        node: 'master',
        event: 'skipped',
      }),
    ).toBe('node=master&model=a&kind=plan&event=skipped&outcome=skipped&reason=cost_rejected');
    expect(query({ model: 'llama 3/8b' })).toBe('model=llama+3%2F8b');
    expect(new URLSearchParams(query({ model: 'llama 3/8b' })).get('model')).toBe('llama 3/8b');
  });

  it('an event or outcome that cannot belong to the chosen kind is dropped', () => {
    expect(query({ kind: 'helper', event: 'lent', outcome: 'granted' })).toBe('kind=helper');
    expect(query({ kind: 'dispatch', event: 'lent', outcome: 'granted' })).toBe('kind=dispatch&event=lent');
    expect(query({ event: 'lent', outcome: 'granted' })).toBe('event=lent&outcome=granted');
  });

  it('combines time and the other filters', () => {
    expect(query({ range: '1h', node: 'owner', kind: 'dispatch' })).toBe(
      `from=${NOW - 3_600_000}&node=owner&kind=dispatch`,
    );
  });
});

describe('filter pickers', () => {
  it('events per kind (LOG-2..4); all of them with no kind', () => {
    expect(eventOptions('plan')).toEqual(['granted', 'probe', 'skipped']);
    expect(eventOptions('helper')).toEqual(['native_waited_behind_borrowed', 'borrowed_returned']);
    expect(eventOptions('')).toEqual(Object.values(EVENTS_BY_KIND).flat());
    expect(eventOptions('dispatch')).toContain('relay_refused');
  });

  it('nodes from the Lending view; models as local IDs, once each, sorted', () => {
    expect(nodeOptions([{ nodeId: 'master' }, { nodeId: 'gpu-b' }])).toEqual(['master', 'gpu-b']);
    expect(nodeOptions(null)).toEqual([]);
    const models: ClusterModel[] = [
      {
        id: 'm',
        baseId: 'm',
        capabilities: ['text'],
        configHash: 'c',
        modelHash: null,
        replicas: [
          { nodeId: 'a', localId: 'zeta', available: true },
          { nodeId: 'b', localId: 'alpha', available: true },
        ],
      },
      {
        id: 'n',
        baseId: 'n',
        capabilities: ['text'],
        configHash: 'c',
        modelHash: null,
        replicas: [{ nodeId: 'a', localId: 'alpha', available: false }],
      },
    ];
    expect(modelOptions(models)).toEqual(['alpha', 'zeta']);
    expect(modelOptions(undefined)).toEqual([]);
  });

  it('counts the filters set (Clear is offered only then)', () => {
    expect(activeFilterCount(EMPTY_FILTER)).toBe(0);
    expect(activeFilterCount(draft({ range: 'custom' }))).toBe(0);
    expect(activeFilterCount(draft({ range: 'custom', from: '2025-01-01T00:00' }))).toBe(1);
    expect(activeFilterCount(draft({ range: '1h', kind: 'plan', reason: 'outranked' }))).toBe(3);
  });

  it('reads datetime-local values as local time', () => {
    expect(localTimeMs('')).toBeNull();
    expect(localTimeMs('2025-03-04T05:06')).toBe(new Date(2025, 2, 4, 5, 6).getTime());
    expect(localTimeMs('2025-03-04T05:06:07')).toBe(new Date(2025, 2, 4, 5, 6, 7).getTime());
    expect(localTimeMs('2025-13-01T00:00')).toBeNaN();
    expect(localTimeMs('04/03/2025')).toBeNaN();
  });
});
