/**
 * The PyTorch operator view (`pytorch_operators`): which table a payload holds, and which
 * operator (and input shape) a row names when its calls recorded call stacks.
 *
 *   const table = firstTable(payload);
 *   stackTarget(table, row);   // { opName, inputShape? } or null
 */
import { isDataTable, type DataRow, type DataTable } from '../table/datatable';

/** The first table of a tool answer (a list of tables, or one table). */
export function firstTable(payload: unknown): DataTable | null {
  const table = Array.isArray(payload) ? payload[0] : payload;
  return isDataTable(table) ? table : null;
}

/** The operator (and input shape) a row names, when its calls recorded call stacks. */
export function stackTarget(table: DataTable, row: DataRow): { opName: string; inputShape?: string } | null {
  const at = (id: string) => table.cols.findIndex((c) => c.id === id);
  const [name, shape, recorded] = [at('name'), at('input_shape'), at('has_call_stack')];
  if (name < 0 || recorded < 0 || row.c[recorded]?.v !== 'Yes') return null;
  const opName = String(row.c[name]?.v ?? '');
  return shape >= 0 ? { opName, inputShape: String(row.c[shape]?.v ?? '') } : { opName };
}
