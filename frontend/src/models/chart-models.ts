/**
 * What a tool model hands to a chart: plain data (bars, slices, series over time) and the fixed
 * series colours a model picks from. `charts/` turns these into ECharts options; models never
 * import `charts/` (src/README.md), so the shapes both sides share live here.
 */

export interface SeriesModel {
  name: string;
  color: string;
  values: number[];
}

/** Bars stacked per category (a step, a core): one series per component. */
export interface StackedBarModel {
  categories: string[];
  series: SeriesModel[];
  /** Unit of the values, e.g. `ms`. */
  unit: string;
  axisLabel: string;
  /** Optional full tooltip text per category (replaces the generated one). */
  tooltips?: string[];
}

export interface PieSlice {
  name: string;
  value: number;
}

export interface PieModel {
  title: string;
  slices: PieSlice[];
  unit: string;
}

/** Slices sorted by value, the tail beyond `max - 1` merged into "Other". Zero slices dropped. */
export function topSlices(slices: readonly PieSlice[], max = 10): PieSlice[] {
  const sorted = slices.filter((s) => s.value > 0).sort((a, b) => b.value - a.value);
  if (sorted.length <= max) return sorted;
  const head = sorted.slice(0, max - 1);
  const rest = sorted.slice(max - 1).reduce((sum, s) => sum + s.value, 0);
  return [...head, { name: 'Other', value: rest }];
}

export interface TimelineSeriesModel {
  name: string;
  color: string;
  /** [x, y] points. */
  data: [number, number][];
  /** Stacked areas share one stack; lines on the right axis do not. */
  area: boolean;
  rightAxis?: boolean;
  hidden?: boolean;
}

export interface TimelineChartModel {
  xLabel: string;
  leftLabel: string;
  rightLabel: string;
  series: TimelineSeriesModel[];
  tooltip: (index: number) => string;
}

/**
 * Ten distinct hues, medium lightness: readable on white and on near-black, so they need no
 * theme. Step-time categories keep one colour everywhere (input time is always red).
 */
export const PALETTE = [
  '#3b82f6',
  '#f59e0b',
  '#10b981',
  '#a855f7',
  '#ec4899',
  '#14b8a6',
  '#eab308',
  '#6366f1',
  '#f97316',
  '#94a3b8',
];

export const INPUT_RED = '#e03131';
