import { describe, expect, it } from 'vitest';
import { columnLabel, isDataTable, isDataTableList, tableProperties, tableTitle, type DataRow } from './datatable';
import { tableToCsv } from './csv';
import { filterRows } from './filter';
import { formatNumber, formatValue } from '../format';
import { formatCell } from './format';
import { pageInfo, pageSlice } from './page';
import { compareValues, nextSort, sortRows } from './sort';

const row = (...values: (string | number | boolean | null)[]): DataRow => ({
  c: values.map((v) => (v === null ? null : { v })),
});
const firstColumn = (rows: DataRow[]) => rows.map((r) => r.c[0]?.v ?? null);

describe('format', () => {
  it('keeps at most three decimals and no grouping', () => {
    expect(formatNumber(1.23456)).toBe('1.235');
    expect(formatNumber(1234567)).toBe('1234567');
    expect(formatNumber(2)).toBe('2');
    expect(formatNumber(-0.0004)).toBe('0');
  });
  it('renders booleans, nulls and non-finite numbers', () => {
    expect(formatValue(true)).toBe('true');
    expect(formatValue(null)).toBe('');
    expect(formatNumber(Infinity)).toBe('∞');
    expect(formatNumber(NaN)).toBe('NaN');
  });
  it('ignores f for numbers but uses it when v is missing', () => {
    expect(formatCell({ v: 0.5, f: '<b>50%</b>' })).toBe('0.5');
    expect(formatCell({ f: 'shown' })).toBe('shown');
    expect(formatCell({ v: 'name', f: '<a>x</a>' })).toBe('name');
    expect(formatCell(null)).toBe('');
  });
});

describe('sort', () => {
  it('sorts numbers numerically, not as text', () => {
    const rows = [row(10), row(9), row(100), row(1.5)];
    expect(firstColumn(sortRows(rows, { column: 0, direction: 'asc' }))).toEqual([1.5, 9, 10, 100]);
    expect(firstColumn(sortRows(rows, { column: 0, direction: 'desc' }))).toEqual([100, 10, 9, 1.5]);
  });
  it('is stable and keeps nulls last in both directions', () => {
    const rows = [row(1, 'a'), row(null, 'n'), row(1, 'b'), row(0, 'c')];
    const asc = sortRows(rows, { column: 0, direction: 'asc' }).map((r) => r.c[1]?.v);
    const desc = sortRows(rows, { column: 0, direction: 'desc' }).map((r) => r.c[1]?.v);
    expect(asc).toEqual(['c', 'a', 'b', 'n']);
    expect(desc).toEqual(['a', 'b', 'c', 'n']);
  });
  it('orders strings naturally and does not mutate the input', () => {
    const rows = [row('op10'), row('op9'), row('Op1')];
    expect(firstColumn(sortRows(rows, { column: 0, direction: 'asc' }))).toEqual(['Op1', 'op9', 'op10']);
    expect(firstColumn(rows)).toEqual(['op10', 'op9', 'Op1']);
  });
  it('compares mixed types by type rank', () => {
    expect(compareValues(1, 'a')).toBeLessThan(0);
    expect(compareValues(false, true)).toBeLessThan(0);
  });
  it('toggles direction on the same column', () => {
    expect(nextSort(null, 2)).toEqual({ column: 2, direction: 'asc' });
    expect(nextSort({ column: 2, direction: 'asc' }, 2)).toEqual({ column: 2, direction: 'desc' });
    expect(nextSort({ column: 2, direction: 'desc' }, 1)).toEqual({ column: 1, direction: 'asc' });
  });
});

describe('filter', () => {
  const rows = [row('MatMul', 12.3456), row('Conv2D', 3), row('relu', null)];
  it('matches any cell, case-insensitively', () => {
    expect(firstColumn(filterRows(rows, 'conv'))).toEqual(['Conv2D']);
    expect(firstColumn(filterRows(rows, '12.346'))).toEqual(['MatMul']);
    expect(firstColumn(filterRows(rows, '12.3456'))).toEqual(['MatMul']);
  });
  it('returns everything for an empty query', () => {
    expect(filterRows(rows, '  ')).toHaveLength(3);
  });
});

describe('page', () => {
  it('computes bounds and clamps the page', () => {
    expect(pageInfo(120, 0, 50)).toEqual({ page: 0, pageCount: 3, start: 0, end: 50 });
    expect(pageInfo(120, 9, 50)).toEqual({ page: 2, pageCount: 3, start: 100, end: 120 });
    expect(pageInfo(0, 3, 50)).toEqual({ page: 0, pageCount: 1, start: 0, end: 0 });
    expect(pageSlice([1, 2, 3, 4, 5], 1, 2)).toEqual([3, 4]);
  });
});

describe('datatable', () => {
  it('recognises tables and lists of tables', () => {
    expect(isDataTable({ cols: [], rows: [] })).toBe(true);
    expect(isDataTable({ traceEvents: [] })).toBe(false);
    expect(isDataTable([])).toBe(false);
    expect(isDataTableList([{ cols: [] }, {}])).toBe(true);
    expect(isDataTableList([1, 2])).toBe(false);
  });
  it('derives labels, titles and properties', () => {
    expect(columnLabel({ id: 'x' }, 0)).toBe('x');
    expect(columnLabel({}, 2)).toBe('Column 3');
    expect(tableTitle({ cols: [], rows: [], p: { title: 'Ops' } }, 0)).toBe('Ops');
    expect(tableTitle({ cols: [], rows: [] }, 1)).toBe('Table 2');
    expect(tableProperties({ cols: [], rows: [], p: { b: '2', a: '1' } })).toEqual([
      ['a', '1'],
      ['b', '2'],
    ]);
  });
});

describe('csv', () => {
  it('writes the given rows, quotes every field and never starts a formula', () => {
    const table = {
      cols: [
        { id: 'name', label: 'Name', type: 'string' },
        { id: 'time', label: 'Time (us)', type: 'number' },
      ],
      rows: [{ c: [{ v: '=HYPERLINK("x")' }, { v: -3.5 }] }, { c: [{ v: 'a"b' }, { v: null }] }],
    };
    expect(tableToCsv(table)).toBe('"Name","Time (us)"\n"\'=HYPERLINK(""x"")","-3.5"\n"a""b",""\n');
  });
});
