/**
 * Units of table columns, and values shown in a readable unit each.
 *
 * A column declares its unit in its custom properties, `{"p": {"unit": "us"}}` (our own tools'
 * tables do). Tables whose bytes follow upstream's payload carry no properties on columns; for
 * them the unit is read from the label's fixed suffix our converters and upstream's write,
 * "(us)", "(ms)", "(bytes)", "(MiB)" and so on, and only that suffix: nothing is guessed from
 * other words of a label. Each value is then shown in the unit that suits it (time: ns, µs, ms,
 * s; bytes: B, KiB, MiB, GiB), the raw value and its unit in the cell's tooltip. Sorting and CSV
 * exports use the raw value.
 *
 *   columnUnit({ label: 'Self time (us)', type: 'number' })   → 'us'
 *   formatInUnit(1149007.737, 'us')                           → '1.15 s'
 *   formatInUnit(3 * 1024 * 1024, 'B')                        → '3.00 MiB'
 */
import { formatBytes, formatDuration, formatNumber } from '../format';
import type { DataColumn } from './datatable';

export type Unit = 'ns' | 'us' | 'ms' | 's' | 'B' | 'KiB' | 'MiB' | 'GiB';

/** Milliseconds per unit of time. */
const TIME_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, ms: 1, s: 1000 };
/** Bytes per unit of size. */
const SIZE_BYTES: Record<string, number> = { B: 1, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3 };

/** The spellings a column may declare, and the label suffixes, by unit. */
const SPELLINGS: Record<string, Unit> = {
  ns: 'ns',
  us: 'us',
  µs: 'us', // the micro sign
  μs: 'us', // the Greek letter mu (kernel stats' labels)
  ms: 'ms',
  s: 's',
  b: 'B',
  bytes: 'B',
  kib: 'KiB',
  mib: 'MiB',
  gib: 'GiB',
};

/** "Total time (us)", "Size (bytes)": a unit in parentheses that ends the label. */
const LABEL_SUFFIX = /\s+\(\s*(ns|us|µs|μs|ms|s|b|bytes|kib|mib|gib)\s*\)\s*$/i;

/** The unit of a number column: declared in `p.unit`, else the label's suffix; null when none. */
export function columnUnit(column: DataColumn | undefined): Unit | null {
  if (!column || column.type !== 'number') return null;
  const declared = column.p?.unit;
  if (typeof declared === 'string') return SPELLINGS[declared.trim().toLowerCase()] ?? null;
  const match = LABEL_SUFFIX.exec(column.label ?? '');
  return match ? (SPELLINGS[match[1].toLowerCase()] ?? null) : null;
}

/** A unit in parentheses anywhere in a label: "Device self (us) — baseline". */
const LABEL_UNIT = /\s*\(\s*(ns|us|µs|μs|ms|s|b|bytes|kib|mib|gib)\s*\)/i;

/**
 * The label without its unit (the values carry their own units), else the label: the suffix,
 * or, where the column declares its unit, the first unit in parentheses ("Device self — baseline").
 */
export function labelWithoutUnit(label: string, column: DataColumn | undefined): string {
  if (!columnUnit(column)) return label;
  const declared = typeof column?.p?.unit === 'string';
  const stripped = declared ? label.replace(LABEL_UNIT, '') : label.replace(LABEL_SUFFIX, '');
  return stripped || label;
}

/** `value` (in `unit`) in the unit that suits it: `1.15 s`, `812 µs`, `3.00 MiB`. */
export function formatInUnit(value: number, unit: Unit): string {
  if (!Number.isFinite(value)) return formatNumber(value);
  if (unit in TIME_MS) return value === 0 ? '0' : formatDuration(value * TIME_MS[unit]);
  const bytes = value * SIZE_BYTES[unit];
  return (bytes < 0 ? '-' : '') + formatBytes(Math.abs(bytes));
}

/** The tooltip of a converted cell: the raw value in the column's unit ("1149007.737 us"). */
export function rawWithUnit(value: number, unit: Unit): string {
  return `${formatNumber(value)} ${unit === 'B' ? 'bytes' : unit}`;
}
