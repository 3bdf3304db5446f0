/**
 * How a cell is shown. Numbers get at most 3 decimals, numbers of a column with a unit the unit
 * that suits each value (`table/units.ts`); sorting always uses the raw value.
 */
import { formatValue } from '../format';
import type { DataCell, DataColumn } from './datatable';
import { columnUnit, formatInUnit } from './units';
/**
 * The text of a cell. A formatted value `f` is used only for non-numbers: upstream puts HTML
 * into some `f` fields, and numbers read better with our own formatting. The result is always
 * rendered as text, never as markup.
 */
export function formatCell(cell: DataCell | null, column?: DataColumn): string {
  if (!cell) return '';
  const value = cell.v;
  const unit = typeof value === 'number' ? columnUnit(column) : null;
  if (unit) return formatInUnit(value as number, unit);
  if (typeof value === 'number' || typeof value === 'boolean') return formatValue(value);
  if (typeof cell.f === 'string' && (value === null || value === undefined)) return cell.f;
  return formatValue(value);
}
