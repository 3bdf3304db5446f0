/**
 * CSV of a DataTable, written the way the server's `data_csv` writes it (every field quoted,
 * `""` for null, `\n` line ends, no cell that starts a formula), for tables the page derives
 * itself (memory breakdown, top ops) and for "Export as shown" (the filtered, sorted rows).
 */
import { columnLabel, tableRows, type DataTable } from './datatable';

/** A text cell a spreadsheet would read as a formula gets a leading `'` (as the server's CSV). */
const FORMULA_START = /^[=+\-@\t\r]/;

function field(value: unknown): string {
  let text = value === null || value === undefined ? '' : String(value);
  if (typeof value === 'string' && FORMULA_START.test(text)) text = `'${text}`;
  return '"' + text.replace(/"/g, '""') + '"';
}

export function tableToCsv(table: DataTable): string {
  const header = table.cols.map((column, index) => field(columnLabel(column, index))).join(',');
  const lines = tableRows(table).map((row) => table.cols.map((_, index) => field(row?.c?.[index]?.v)).join(','));
  return [header, ...lines].join('\n') + '\n';
}

/** A file name made of safe characters only. */
export function csvFileName(parts: readonly string[]): string {
  return parts.filter(Boolean).map((p) => p.replace(/[^A-Za-z0-9_-]/g, '_')).join('_') + '.csv';
}
