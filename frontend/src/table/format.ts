/** How a cell is shown. Numbers get at most 3 decimals; sorting always uses the raw value. */
import type { DataCell } from './datatable';

const numberFormat = new Intl.NumberFormat('en-US', { maximumFractionDigits: 3, useGrouping: false });

export function formatNumber(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? '∞' : '-∞';
  const text = numberFormat.format(value);
  return text === '-0' ? '0' : text;
}

export function formatValue(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return formatNumber(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

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
