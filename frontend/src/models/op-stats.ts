/**
 * framework_op_stats (`[with_idle, without_idle]`): the four pie charts (host / device self time
 * by operation and by operation type), the host/device/type/name filters of the op table, and
 * the top operations the Overview shows.
 */
import { topSlices, type PieModel, type PieSlice } from './chart-models';
import { tableRows, type DataRow, type DataTable } from '../table/datatable';
import { columnIndex, fractionsAsPercent, numberAt, stringAt } from './gviz';

export interface OpStatsTables {
  withIdle: DataTable | undefined;
  withoutIdle: DataTable | undefined;
}

export function opStatsTables(payload: unknown): OpStatsTables {
  const list = (Array.isArray(payload) ? payload : [payload]).filter(
    (t): t is DataTable => !!t && typeof t === 'object' && Array.isArray((t as DataTable).cols) && columnIndex(t as DataTable, 'operation') >= 0,
  );
  return { withIdle: list[0], withoutIdle: list[1] ?? list[0] };
}

export type Side = 'Host' | 'Device';

/** The "(%)" columns of the op table, which hold fractions (0.31 for 31%). */
const FRACTION_COLUMNS = new Set([
  'device_total_self_time_percent',
  'device_cumulative_total_self_time_percent',
  'host_total_self_time_percent',
  'Host_cumulative_total_self_time_percent',
]);

/** The op table as shown: its "(%)" columns as percentages. */
export function opTableForDisplay(table: DataTable): DataTable {
  return fractionsAsPercent(table, FRACTION_COLUMNS);
}

export interface OpFilter {
  side: '' | Side;
  type: string;
  name: string;
}

export const NO_OP_FILTER: OpFilter = { side: '', type: '', name: '' };

/**
 * The filter for a name handed over from the trace viewer ("Show in TF stats"): the operation
 * names containing it, else the operation type it names (`MatMul`), else its part before a
 * `name:type` colon; the name filter as given when nothing matches (the page says so).
 */
export function opFilterFor(table: DataTable | undefined, given: string): OpFilter {
  const name = given.trim();
  if (!name || !table) return { ...NO_OP_FILTER, name };
  const has = (filter: OpFilter) => tableRows(filterOps(table, filter)).length > 0;
  const candidates: OpFilter[] = [{ ...NO_OP_FILTER, name }];
  const types = new Set(tableRows(table).map((row) => stringAt(row, columnIndex(table, 'type'))));
  const type = [...types].find((t) => t.toLowerCase() === name.toLowerCase());
  if (type) candidates.push({ ...NO_OP_FILTER, type });
  if (name.includes(':')) candidates.push({ ...NO_OP_FILTER, name: name.slice(0, name.indexOf(':')) });
  return candidates.find(has) ?? candidates[0];
}

export function isFiltered(filter: OpFilter): boolean {
  return Boolean(filter.side || filter.type.trim() || filter.name.trim());
}

/** Rows matching the host/device choice and the type and name substrings (case-insensitive). */
export function filterOps(table: DataTable, filter: OpFilter): DataTable {
  const side = columnIndex(table, 'host_or_device');
  const type = columnIndex(table, 'type');
  const name = columnIndex(table, 'operation');
  const typeNeedle = filter.type.trim().toLowerCase();
  const nameNeedle = filter.name.trim().toLowerCase();
  const rows = tableRows(table).filter(
    (row) =>
      (!filter.side || stringAt(row, side) === filter.side) &&
      (!typeNeedle || stringAt(row, type).toLowerCase().includes(typeNeedle)) &&
      (!nameNeedle || stringAt(row, name).toLowerCase().includes(nameNeedle)),
  );
  return { ...table, rows };
}

function sideRows(table: DataTable, side: Side): DataRow[] {
  const index = columnIndex(table, 'host_or_device');
  return tableRows(table).filter((row) => stringAt(row, index) === side);
}

/** Self time (us) per key (operation name or type) on one side. */
function selfTimeBy(table: DataTable, side: Side, key: 'operation' | 'type'): PieSlice[] {
  const keyIndex = columnIndex(table, key);
  const timeIndex = columnIndex(table, 'total_self_time');
  const totals = new Map<string, number>();
  for (const row of sideRows(table, side)) {
    const name = stringAt(row, keyIndex);
    totals.set(name, (totals.get(name) ?? 0) + numberAt(row, timeIndex));
  }
  return [...totals.entries()].map(([name, value]) => ({ name, value }));
}

/** Up to four pies; a side without self time gets none. */
export function opStatsPies(table: DataTable | undefined): PieModel[] {
  if (!table) return [];
  const pies: PieModel[] = [];
  for (const side of ['Device', 'Host'] as const) {
    for (const key of ['operation', 'type'] as const) {
      const slices = topSlices(selfTimeBy(table, side, key), 10);
      if (slices.length === 0) continue;
      pies.push({
        title: `${side}-side self time by operation${key === 'type' ? ' type' : ''}`,
        slices,
        unit: 'us',
      });
    }
  }
  return pies;
}

export interface TopOp {
  rank: number;
  side: string;
  type: string;
  name: string;
  selfTimeUs: number;
  /** Fraction of that side's self time, 0–1. */
  selfFraction: number;
}

/** The `count` ops with most self time: device ops when the device ran any, else host ops. */
export function topOps(table: DataTable | undefined, count = 10): TopOp[] {
  if (!table) return [];
  const timeIndex = columnIndex(table, 'total_self_time');
  const device = sideRows(table, 'Device').filter((row) => numberAt(row, timeIndex) > 0 && !isIdle(table, row));
  const side: Side = device.length ? 'Device' : 'Host';
  const rows = (device.length ? device : sideRows(table, 'Host')).filter((row) => !isIdle(table, row));
  const total = rows.reduce((sum, row) => sum + numberAt(row, timeIndex), 0);
  const type = columnIndex(table, 'type');
  const name = columnIndex(table, 'operation');
  return rows
    .map((row) => ({ row, time: numberAt(row, timeIndex) }))
    .sort((a, b) => b.time - a.time)
    .slice(0, count)
    .map(({ row, time }, i) => ({
      rank: i + 1,
      side,
      type: stringAt(row, type),
      name: stringAt(row, name),
      selfTimeUs: time,
      selfFraction: total > 0 ? time / total : 0,
    }));
}

function isIdle(table: DataTable, row: DataRow): boolean {
  return stringAt(row, columnIndex(table, 'type')) === 'IDLE';
}

/** Top ops as a DataTable for the table component. */
export function topOpsTable(ops: readonly TopOp[]): DataTable {
  return {
    cols: [
      { id: 'rank', label: 'Rank', type: 'number' },
      { id: 'side', label: 'Host/device', type: 'string' },
      { id: 'type', label: 'Operation type', type: 'string' },
      { id: 'operation', label: 'Operation', type: 'string' },
      { id: 'self_time_us', label: 'Self time (us)', type: 'number' },
      { id: 'self_time_percent', label: 'Self time (%)', type: 'number' },
    ],
    rows: ops.map((op) => ({
      c: [
        { v: op.rank },
        { v: op.side },
        { v: op.type },
        { v: op.name },
        { v: op.selfTimeUs },
        { v: Math.round(op.selfFraction * 1000) / 10 },
      ],
    })),
  };
}
