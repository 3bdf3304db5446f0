import { describe, expect, it } from 'vitest';
import { baseHostOptions, baseRunOptions, compareColumns, compareLabels, compareSummary, readBaseRun, withBaseRun } from './compare';
import type { DataTable } from './table/datatable';

const table: DataTable = {
  cols: ['name', 'status', 'calls_base', 'total_us_base', 'total_us_exp', 'total_us_delta', 'total_us_delta_pct'].map((id) => ({
    id,
    label: id,
    type: id === 'name' || id === 'status' ? 'string' : 'number',
  })),
  rows: [],
  p: { keys: ['name'], values: ['total_us', 'calls'], summary: 'kernel time 1 -> 2 (+100.0%)' },
};

describe('compare', () => {
  it('keeps the baseline in the URL beside the other parameters', () => {
    expect(withBaseRun('?run=a&tool=t', 'b')).toBe('?run=a&tool=t&base_run=b');
    expect(readBaseRun('?run=a&base_run=b%2F1')).toBe('b/1');
    expect(withBaseRun('?run=a&base_run=b', '')).toBe('?run=a');
  });

  it('offers all the baseline hosts, or one', () => {
    expect(baseHostOptions(['rank0', 'rank1']).map((o) => o.value)).toEqual(['', 'rank0', 'rank1']);
  });

  it('offers every other run as a baseline, and none', () => {
    expect(baseRunOptions(['a', 'b', 'c'], 'b').map((o) => o.value)).toEqual(['', 'a', 'c']);
  });

  it('shows the keys, the status and the first value first', () => {
    expect(compareColumns(table)).toEqual(['name', 'status', 'total_us_base', 'total_us_exp', 'total_us_delta', 'total_us_delta_pct']);
    expect(compareLabels(table)['total_us_delta_pct']).toBe('total — Δ%');
    expect(compareLabels(table)['total_us_base']).toBe('total (us) — baseline');
    const labelled = { ...table, cols: table.cols.map((c) => (c.id === 'total_us_exp' ? { ...c, label: 'Total time (us) — experiment' } : c)) };
    expect(compareLabels(labelled)['total_us_exp']).toBe('Total time (us) — experiment');
    expect(compareSummary(table)).toBe('kernel time 1 -> 2 (+100.0%)');
  });
});
