import { describe, expect, it } from 'vitest';
import { SOURCE_LABEL, sourceLabel } from '../../src-renderer/src/record-source';
import { recordSourceSchema } from '../../src-router/contract';

// ID-1: the Models table's Source column.
describe('record source label (ID-1)', () => {
  it('one label per source the router names; an older node reports none: —', () => {
    expect(Object.keys(SOURCE_LABEL).sort()).toEqual([...recordSourceSchema.options].sort());
    expect(recordSourceSchema.options.map(sourceLabel)).toEqual([
      'config file',
      'recipe',
      'static route',
      'remote node',
    ]);
    expect(sourceLabel(undefined)).toBe('—');
  });
});
