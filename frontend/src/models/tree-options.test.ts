import { describe, expect, it } from 'vitest';
import { DEFAULT_TREE_OPTIONS, TREE_COLUMNS, columnShown, optionParams, orderAfterClick } from './tree-options';

describe('tree view options', () => {
  it('sends nothing for the defaults', () => {
    expect(optionParams(DEFAULT_TREE_OPTIONS)).toEqual({});
  });

  it('sends each option under its server name, trimmed', () => {
    const params = optionParams({
      ...DEFAULT_TREE_OPTIONS,
      orderBy: 'name',
      maxDepth: ' 2 ',
      minMicros: '100',
      show: '.*conv.*',
      hide: 'gradients/.*',
      account: 'Conv2D,MatMul',
    });
    expect(params).toEqual({
      order_by: 'name',
      max_depth: '2',
      min_micros: '100',
      show_name_regexes: '.*conv.*',
      hide_name_regexes: 'gradients/.*',
      account_type_regexes: 'Conv2D,MatMul',
    });
  });

  it('selects columns in display order, and none when all are chosen', () => {
    const some = { ...DEFAULT_TREE_OPTIONS, columns: ['occurrences', 'total_time_us'] };
    expect(optionParams(some).select).toBe('total_time_us,occurrences');
    expect(columnShown(some, 'ops')).toBe(false);
    const all = { ...DEFAULT_TREE_OPTIONS, columns: TREE_COLUMNS.map((c) => c.id) };
    expect(optionParams(all).select).toBeUndefined();
  });

  it('orders by a clicked header; the share column sorts as total time', () => {
    expect(orderAfterClick(DEFAULT_TREE_OPTIONS, 'occurrences').orderBy).toBe('occurrences');
    expect(orderAfterClick(DEFAULT_TREE_OPTIONS, 'total_time_percent').orderBy).toBe('total_time_us');
  });
});
