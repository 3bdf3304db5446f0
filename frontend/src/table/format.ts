/** How a cell is shown. Numbers get at most 3 decimals; sorting always uses the raw value. */
import { formatValue } from '../format';
import type { DataCell } from './datatable';
/**
 * The text of a cell. A formatted value `f` is used only for non-numbers: upstream puts HTML
 * into some `f` fields, and numbers read better with our own formatting. The result is always
 * rendered as text, never as markup.
 */
export function formatCell(cell: DataCell | null): string {
  if (!cell) return '';
  const value = cell.v;
  if (typeof value === 'number' || typeof value === 'boolean') return formatValue(value);
  if (typeof cell.f === 'string' && (value === null || value === undefined)) return cell.f;
  return formatValue(value);
}
