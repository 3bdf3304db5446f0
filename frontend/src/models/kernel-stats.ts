/**
 * kernel_stats (one DataTable, a row per kernel × op): the pie of the kernels with most total
 * time, summary numbers, and the table filters (kernel name, op name, Tensor Core use).
 */
import { topSlices, type PieModel } from './chart-models';
import { isDataTable, tableRows, type DataTable } from '../table/datatable';
import { cellValue, columnIndex, numberAt, stringAt } from './gviz';

export interface KernelFilter {
  kernel: string;
  op: string;
  /** '' any, 'yes' uses Tensor Cores, 'no' does not, 'eligible-unused' eligible op not using them. */
  tensorCore: '' | 'yes' | 'no' | 'eligible-unused';
}

export const NO_KERNEL_FILTER: KernelFilter = { kernel: '', op: '', tensorCore: '' };

export function kernelTable(payload: unknown): DataTable | undefined {
  const table = Array.isArray(payload) ? payload.find(isDataTable) : payload;
  return isDataTable(table) && columnIndex(table, 'kernel_name') >= 0 ? table : undefined;
}

export interface KernelSummary {
  rows: number;
  kernels: number;
  totalUs: number;
  tensorCoreUs: number;
}

export function kernelSummary(table: DataTable): KernelSummary {
  const name = columnIndex(table, 'kernel_name');
  const total = columnIndex(table, 'total_duration_us');
  const usesTc = columnIndex(table, 'is_kernel_using_tensor_core');
  const rows = tableRows(table);
  return {
    rows: rows.length,
    kernels: new Set(rows.map((row) => stringAt(row, name))).size,
    totalUs: rows.reduce((sum, row) => sum + numberAt(row, total), 0),
    tensorCoreUs: rows.reduce((sum, row) => sum + (cellValue(row, usesTc) === true ? numberAt(row, total) : 0), 0),
  };
}

/** Top kernels by total duration (same kernel under several ops is summed). */
export function kernelPie(table: DataTable, max = 10): PieModel {
  const name = columnIndex(table, 'kernel_name');
  const total = columnIndex(table, 'total_duration_us');
  const sums = new Map<string, number>();
  for (const row of tableRows(table)) {
    const key = stringAt(row, name);
    sums.set(key, (sums.get(key) ?? 0) + numberAt(row, total));
  }
  return {
    title: `Top ${max} kernels by total time`,
    slices: topSlices([...sums.entries()].map(([n, value]) => ({ name: n, value })), max),
    unit: 'us',
  };
}

export function filterKernels(table: DataTable, filter: KernelFilter): DataTable {
  const name = columnIndex(table, 'kernel_name');
  const op = columnIndex(table, 'op_name');
  const eligible = columnIndex(table, 'is_op_tensor_core_eligible');
  const uses = columnIndex(table, 'is_kernel_using_tensor_core');
  const kernelNeedle = filter.kernel.trim().toLowerCase();
  const opNeedle = filter.op.trim().toLowerCase();
  const rows = tableRows(table).filter((row) => {
    if (kernelNeedle && !stringAt(row, name).toLowerCase().includes(kernelNeedle)) return false;
    if (opNeedle && !stringAt(row, op).toLowerCase().includes(opNeedle)) return false;
    const usesTc = cellValue(row, uses) === true;
    if (filter.tensorCore === 'yes' && !usesTc) return false;
    if (filter.tensorCore === 'no' && usesTc) return false;
    if (filter.tensorCore === 'eligible-unused' && (usesTc || cellValue(row, eligible) !== true)) return false;
    return true;
  });
  return { ...table, rows };
}
