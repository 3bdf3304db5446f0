/** Case-insensitive text filter across the displayed text of every cell. */
import type { DataRow } from './datatable';
import { formatCell } from './format';

export function filterRows(rows: readonly DataRow[], query: string): DataRow[] {
  const needle = query.trim().toLowerCase();
  if (!needle) return rows.slice();
  return rows.filter((row) =>
    (Array.isArray(row?.c) ? row.c : []).some((cell) => {
      if (!cell) return false;
      if (formatCell(cell).toLowerCase().includes(needle)) return true;
      return cell.v !== null && cell.v !== undefined && String(cell.v).toLowerCase().includes(needle);
    }),
  );
}
