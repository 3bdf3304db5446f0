/**
 * The page's value formatters, in one place: every number a view shows goes through one of
 * these (tables, metrics, chart labels, the trace ruler and details).
 *
 *   formatNumber(1234.56789) → '1234.568'     formatMs(12.3456) → '12.35 ms'
 *   formatDuration(0.0123) → '12.3 µs'        formatBytes(3 * 1024 * 1024) → '3.00 MiB'
 */

const numberFormat = new Intl.NumberFormat('en-US', { maximumFractionDigits: 3, useGrouping: false });

/** At most 3 decimals, no grouping; ∞ and NaN spelled out. */
export function formatNumber(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? '∞' : '-∞';
  const text = numberFormat.format(value);
  return text === '-0' ? '0' : text;
}

const compactFormat = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 2 });

/** Axis ticks: short and readable (`50M`, `1.5K`, `0.25`), never `50,000,000`. */
export function formatCompact(value: number): string {
  if (!Number.isFinite(value)) return formatNumber(value);
  return Math.abs(value) < 1000 ? formatNumber(value) : compactFormat.format(value);
}

export function formatValue(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return formatNumber(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

/** Milliseconds with 1 to 3 decimals by size ("99.90 ms", "110.1 ms", "0.243 ms"). */
export function formatMs(value: number): string {
  if (!Number.isFinite(value)) return '—';
  return `${value.toFixed(value >= 100 ? 1 : value >= 1 ? 2 : 3)} ms`;
}

export interface TimeUnit {
  suffix: string;
  ms: number;
}

const TIME_UNITS: TimeUnit[] = [
  { suffix: 's', ms: 1000 },
  { suffix: 'ms', ms: 1 },
  { suffix: 'µs', ms: 1e-3 },
  { suffix: 'ns', ms: 1e-6 },
];

/** The largest unit not above `ms` (ns below that). */
export function timeUnitFor(ms: number): TimeUnit {
  const magnitude = Math.abs(ms);
  return TIME_UNITS.find((u) => magnitude >= u.ms) ?? TIME_UNITS[TIME_UNITS.length - 1];
}

/** A duration for people: 3 significant digits in the largest fitting unit ("12.3 µs"). */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return '—';
  if (ms === 0) return '0';
  const unit = timeUnitFor(ms);
  const value = ms / unit.ms;
  const digits = Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2;
  return `${value.toFixed(digits)} ${unit.suffix}`;
}

export const MIB = 1024 * 1024;

export function formatMiB(value: number): string {
  if (value >= 1024) return `${(value / 1024).toFixed(2)} GiB`;
  return `${value.toFixed(value >= 10 ? 1 : 2)} MiB`;
}

/** Bytes in the largest unit that keeps a leading digit: `512 B`, `3.00 KiB`, `1.50 MiB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${Math.round(bytes)} B`;
  if (bytes < MIB) return `${(bytes / 1024).toFixed(2)} KiB`;
  return formatMiB(bytes / MIB);
}
