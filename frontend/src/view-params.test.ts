import { describe, expect, it } from 'vitest';
import { pickNewestRun } from './state';
import { tableToCsv, csvFileName } from './table/csv';
import { withViewParam, withoutViewParams } from './view-params';

describe('view parameters in the URL', () => {
  it('sets, clears and drops view parameters but keeps the selection', () => {
    expect(withViewParam('?run=a&tool=memory_profile', 'memory_id', 'GPU_0_bfc')).toBe('?run=a&tool=memory_profile&memory_id=GPU_0_bfc');
    expect(withViewParam('?run=a&step=3', 'step', '')).toBe('?run=a');
    expect(withoutViewParams('?run=a&tool=t&step=3&idle=1&x=1')).toBe('?run=a&tool=t&x=1');
  });
});

describe('after a capture', () => {
  it('selects the captured session when the server names it', () => {
    expect(pickNewestRun(['r/s1'], ['r/s1', 'r/s2', 'r/s0'], 'r/s1', 's0')).toBe('r/s0');
    expect(pickNewestRun(['r/s1'], ['r/s1', 'r/s2'], 'r/s1', 'nope')).toBe('r/s2');
  });
});

describe('client-side CSV', () => {
  it('quotes every field like data_csv', () => {
    const csv = tableToCsv({
      cols: [{ id: 'a', label: 'Op "name"' }, { id: 'b' }],
      rows: [{ c: [{ v: '<img src=x>' }, { v: 1.5 }] }, { c: [null, { v: null }] }],
    });
    expect(csv).toBe('"Op ""name""","b"\n"<img src=x>","1.5"\n"",""\n');
    expect(csvFileName(['memory breakdown', 'GPU:0'])).toBe('memory_breakdown_GPU_0.csv');
  });
});

describe('switching run or tool', () => {
  it('drops the trace window and event but keeps the TF stats filter handed over', () => {
    const search = '?run=r&tool=t&start_ms=1&end_ms=2&event=7&trace_tab=summary&op_filter=MatMul&step=3';
    expect(withoutViewParams(search)).toBe('?run=r&tool=t&op_filter=MatMul');
  });
});
