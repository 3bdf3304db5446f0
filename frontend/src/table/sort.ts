/** Stable sorting of DataTable rows by one column. */
import { cellAt, type DataRow } from './datatable';

export type SortDirection = 'asc' | 'desc';

export interface SortState {
  column: number;
  direction: SortDirection;
}

/** Orders values: nulls last, then numbers (numerically), booleans, strings (natural order). */
export function compareValues(a: unknown, b: unknown): number {
  const rankA = typeRank(a);
  const rankB = typeRank(b);
  if (rankA !== rankB) return rankA - rankB;
  if (typeof a === 'number' && typeof b === 'number') {
    if (Number.isNaN(a) || Number.isNaN(b)) return Number.isNaN(a) ? (Number.isNaN(b) ? 0 : 1) : -1;
    return a - b;
  }
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  if (typeof a === 'string' && typeof b === 'string') return collator.compare(a, b);
  return 0;
}

const collator = new Intl.Collator('en', { numeric: true, sensitivity: 'base' });

function typeRank(value: unknown): number {
  if (typeof value === 'number') return 0;
  if (typeof value === 'boolean') return 1;
  if (typeof value === 'string') return 2;
  return 3;
}

/** A sorted copy; equal rows keep their order, and nulls stay last in both directions. */
export function sortRows(rows: readonly DataRow[], sort: SortState | null): DataRow[] {
  if (!sort) return rows.slice();
  const sign = sort.direction === 'asc' ? 1 : -1;
  const keyed = rows.map((row, index) => ({ row, index, value: cellAt(row, sort.column)?.v ?? null }));
  keyed.sort((x, y) => {
    const xNull = x.value === null;
    const yNull = y.value === null;
    if (xNull !== yNull) return xNull ? 1 : -1;
    return sign * compareValues(x.value, y.value) || x.index - y.index;
  });
  return keyed.map((entry) => entry.row);
}

/** The next sort after clicking a header: new column → ascending, same column → flip. */
export function nextSort(current: SortState | null, column: number): SortState {
  if (current && current.column === column) {
    return { column, direction: current.direction === 'asc' ? 'desc' : 'asc' };
  }
  return { column, direction: 'asc' };
}
