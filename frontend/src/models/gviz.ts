/**
 * Reading gviz DataTables by column id and their string `p` properties, for the dashboard
 * models. Upstream payloads are positional lists; we find tables by their columns instead,
 * which survives reordering and placeholder entries.
 */
import { isDataTable, tableRows, type DataRow, type DataTable } from '../table/datatable';

export function columnIndex(table: DataTable, id: string): number {
  return table.cols.findIndex((column) => column.id === id);
}

export function hasColumns(table: unknown, ids: readonly string[]): table is DataTable {
  return isDataTable(table) && ids.every((id) => columnIndex(table, id) >= 0);
}

/** The first table of a list (or the payload itself) that has all these columns. */
export function findTable(payload: unknown, ids: readonly string[]): DataTable | undefined {
  const list = Array.isArray(payload) ? payload : [payload];
  return list.find((table): table is DataTable => hasColumns(table, ids));
}

/** Position of the table in the payload list (for `data_csv?table=N`), or -1. */
export function tableIndex(payload: unknown, table: DataTable | undefined): number {
  return Array.isArray(payload) && table ? payload.indexOf(table) : table === payload ? 0 : -1;
}

export function cellValue(row: DataRow, index: number): unknown {
  if (index < 0) return undefined;
  return row?.c?.[index]?.v ?? undefined;
}

export function numberAt(row: DataRow, index: number): number {
  const value = cellValue(row, index);
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

export function stringAt(row: DataRow, index: number): string {
  const value = cellValue(row, index);
  return value === undefined || value === null ? '' : String(value);
}

/** Rows as objects keyed by column id (small tables only). */
export function rowObjects(table: DataTable): Record<string, unknown>[] {
  return tableRows(table).map((row) => {
    const object: Record<string, unknown> = {};
    table.cols.forEach((column, index) => {
      if (column.id) object[column.id] = cellValue(row, index);
    });
    return object;
  });
}

export function property(table: DataTable | undefined, key: string): string {
  const value = table?.p?.[key];
  return typeof value === 'string' ? value : value === undefined || value === null ? '' : String(value);
}

/** A number from a `p` string such as `"82.5%"`, `"15.7"`; NaN for `""`, `"-nan"`, junk. */
export function propertyNumber(table: DataTable | undefined, key: string): number {
  const text = property(table, key).trim().replace(/%$/, '');
  if (!text || !/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(text)) return NaN;
  return Number(text);
}

/**
 * The table with the values of `ids` multiplied by 100 (3 decimals): converters write some
 * "(%)" columns as fractions (0.31 for 31%), which the page shows as percentages.
 */
export function fractionsAsPercent(table: DataTable, ids: ReadonlySet<string>): DataTable {
  const fractions = table.cols.map((c) => ids.has(c.id ?? ''));
  if (!fractions.some(Boolean)) return table;
  return {
    ...table,
    rows: tableRows(table).map((row) => ({
      ...row,
      c: row.c.map((cell, i) => (fractions[i] && cell && typeof cell.v === 'number' ? { v: Math.round(cell.v * 1e5) / 1e3 } : cell)),
    })),
  };
}
