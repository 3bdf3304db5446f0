/**
 * gviz DataTable JSON (as written by gviz_api `ToJSon()`), and guards to recognise it.
 *
 *   {"cols": [{"id", "label", "type"}], "rows": [{"c": [{"v", "f"?} | null]}], "p": {...}}
 */

export type CellValue = string | number | boolean | null;

export interface DataCell {
  v?: CellValue;
  f?: string;
}

export interface DataColumn {
  id?: string;
  label?: string;
  type?: string;
  /** Custom properties; `unit` ("us", "ms", "bytes", "MiB", …) is read by `table/units.ts`. */
  p?: Record<string, unknown>;
}

export interface DataRow {
  c: (DataCell | null)[];
}

export interface DataTable {
  cols: DataColumn[];
  rows: DataRow[];
  p?: Record<string, unknown>;
}

/**
 * Ids of a table's name columns (a string column named `name` or `*_name`): kept on one line in
 * the free width by the shared table, the full name on hover, instead of wrapping a long kernel
 * or operator name over many lines.
 */
export function nameColumns(table: DataTable): string[] {
  return table.cols
    .filter((c) => c.type === 'string' && c.id !== undefined && (c.id === 'name' || c.id.endsWith('_name')))
    .map((c) => c.id as string);
}

/** The server's reason for a table it sends without rows (`p.empty_reason`), else ''. */
export function emptyReason(table: DataTable): string {
  const reason = table.p?.empty_reason;
  return table.rows.length === 0 && typeof reason === 'string' ? reason : '';
}

export function isDataTable(value: unknown): value is DataTable {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return false;
  const { cols, rows } = value as { cols?: unknown; rows?: unknown };
  return Array.isArray(cols) && (rows === undefined || Array.isArray(rows));
}

/** A list whose entries are DataTables (placeholders such as `{}` are allowed between them). */
export function isDataTableList(value: unknown): value is unknown[] {
  return Array.isArray(value) && value.length > 0 && value.some(isDataTable);
}

/** The column title: label, else id, else its position. */
export function columnLabel(column: DataColumn, index: number): string {
  return column.label || column.id || `Column ${index + 1}`;
}

export function cellAt(row: DataRow, index: number): DataCell | null {
  const cells = Array.isArray(row?.c) ? row.c : [];
  return cells[index] ?? null;
}

export function tableRows(table: DataTable): DataRow[] {
  return Array.isArray(table.rows) ? table.rows : [];
}

export function isEmptyTable(table: DataTable): boolean {
  return table.cols.length === 0 && tableRows(table).length === 0;
}

/** A table's heading: a name-like property from `p`, else its position in the list. */
export function tableTitle(table: DataTable, index: number): string {
  const properties = table.p ?? {};
  for (const key of ['title', 'name', 'table_name', 'tableName']) {
    const value = properties[key];
    if (typeof value === 'string' && value.trim()) return value;
  }
  return `Table ${index + 1}`;
}

/** `p` as displayable key/value pairs, sorted by key. */
export function tableProperties(table: DataTable): [string, string][] {
  const properties = table.p ?? {};
  return Object.keys(properties)
    .sort()
    .map((key) => {
      const value = properties[key];
      return [key, typeof value === 'string' ? value : JSON.stringify(value)];
    });
}
