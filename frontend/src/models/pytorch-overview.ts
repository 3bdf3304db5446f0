/**
 * The PyTorch overview (`pytorch_overview`): its step-time breakdown table as a stacked bar per
 * step and the average step's parts with their share, the way torch-tb-profiler showed them.
 *
 *   const model = pytorchOverviewModel(payload);   // null when the payload is not that tool's
 *   stackedBarOption(model.chart, theme);
 */
import { PALETTE, type StackedBarModel } from './chart-models';
import { cellAt, isDataTable, tableRows, tableTitle, type DataRow, type DataTable } from '../table/datatable';

/** Fixed colours per part, same order as the breakdown (Kernel first, Other last). */
export const PART_COLORS: Record<string, string> = {
  Kernel: '#3b82f6',
  Memcpy: '#14b8a6',
  Memset: '#06b6d4',
  Communication: '#a855f7',
  Runtime: '#eab308',
  DataLoader: '#ef4444',
  'CPU Exec': '#10b981',
  Other: '#94a3b8',
};

export interface PartShare {
  name: string;
  us: number;
  percent: number;
  color: string;
}

export interface PytorchOverviewModel {
  averageUs: number;
  steps: number;
  parts: PartShare[];
  chart: StackedBarModel;
  tables: { table: DataTable; index: number; title: string }[];
}

const US_SUFFIX = ' (us)';

export function pytorchOverviewModel(payload: unknown): PytorchOverviewModel | null {
  if (!Array.isArray(payload)) return null;
  const tables = payload
    .map((table, index) => ({ table, index }))
    .filter((t): t is { table: DataTable; index: number } => isDataTable(t.table))
    .map((t) => ({ ...t, title: tableTitle(t.table, t.index) }));
  const breakdown = tables.find((t) => t.table.cols[0]?.id === 'step')?.table;
  if (!breakdown) return null;
  const rows = tableRows(breakdown);
  const partColumns = breakdown.cols
    .map((col, i) => ({ col, i }))
    .filter(({ col }) => col.id !== 'total_us' && (col.id ?? '').endsWith('_us') && (col.label ?? '').endsWith(US_SUFFIX));
  const value = (row: DataRow, i: number) => Number(cellAt(row, i)?.v ?? 0) || 0;
  const cell = (row: DataRow, i: number) => cellAt(row, i)?.v;
  const average = rows.find((r) => cell(r, 0) === 'Average');
  const stepRows = rows.filter((r) => cell(r, 0) !== 'Average');
  const totalIndex = breakdown.cols.findIndex((c) => c.id === 'total_us');
  const averageUs = average ? value(average, totalIndex) : 0;
  const parts = partColumns.map(({ col, i }, k) => {
    const name = (col.label ?? '').slice(0, -US_SUFFIX.length);
    const us = average ? value(average, i) : 0;
    return { name, us, percent: averageUs ? (100 * us) / averageUs : 0, color: PART_COLORS[name] ?? PALETTE[k % PALETTE.length] };
  });
  const chart: StackedBarModel = {
    categories: stepRows.map((r) => String(cell(r, 0))),
    series: partColumns.map(({ i }, k) => ({ name: parts[k].name, color: parts[k].color, values: stepRows.map((r) => value(r, i)) })),
    unit: 'us',
    axisLabel: 'Step time (us)',
  };
  return { averageUs, steps: stepRows.length, parts, chart, tables };
}
