/**
 * The step-time table (overview #1, input pipeline): per-step stacked bars, one colour per
 * component (input time always red), and the average / spread of each component.
 *
 *   const model = stepTimeModel(findTable(payload, ['stepnum'])!);
 *   stackedBarOption(model.chart, theme);
 */
import { INPUT_RED, PALETTE, type StackedBarModel } from './chart-models';
import { tableRows, type DataTable } from '../table/datatable';
import { columnIndex, numberAt, property, propertyNumber, stringAt } from './gviz';

/** Fixed colours of the step-time components (by column id), same on every page. */
export const STEP_COLORS: Record<string, string> = {
  deviceComputeTimeMs: '#3b82f6',
  deviceToDeviceTimeMs: '#14b8a6',
  deviceCollectivesTimeMs: '#a855f7',
  hostComputeTimeMs: '#10b981',
  kernelLaunchTimeMs: '#eab308',
  infeedTimeMs: INPUT_RED,
  inputTimeMs: INPUT_RED,
  outfeedTimeMs: '#ec4899',
  compileTimeMs: '#f97316',
  otherTimeMs: '#94a3b8',
};

/** `p` key prefix of each component's average and deviation (`<prefix>_time_ms_avg`). */
const COMPONENT_KEYS: [string, string][] = [
  ['deviceComputeTimeMs', 'device_compute'],
  ['deviceToDeviceTimeMs', 'device_to_device'],
  ['deviceCollectivesTimeMs', 'device_collectives'],
  ['hostComputeTimeMs', 'host_compute'],
  ['kernelLaunchTimeMs', 'kernel_launch'],
  ['infeedTimeMs', 'infeed'],
  ['outfeedTimeMs', 'outfeed'],
  ['compileTimeMs', 'compile'],
  ['otherTimeMs', 'other'],
];

const NOT_COMPONENTS = new Set(['stepnum', 'tooltip', 'stepTimeMs']);

export interface ComponentStat {
  id: string;
  label: string;
  color: string;
  averageMs: number;
  deviationMs: number;
  /** Share of the average step time, 0–100. */
  percent: number;
}

export interface StepTimeModel {
  steps: number;
  averageMs: number;
  minimumMs: number;
  maximumMs: number;
  deviationMs: number;
  hardwareType: string;
  components: ComponentStat[];
  chart: StackedBarModel;
  conclusion: string;
  nextStep: string;
}

/** Component columns in the order of `step_time_graph_column_ids` (else table order). */
function componentColumns(table: DataTable): number[] {
  const listed = property(table, 'step_time_graph_column_ids')
    .split(',')
    .map((id) => id.trim())
    .filter((id) => id && !NOT_COMPONENTS.has(id));
  const ids = listed.length
    ? listed
    : table.cols.filter((c) => c.type === 'number' && c.id && !NOT_COMPONENTS.has(c.id)).map((c) => c.id!);
  return ids.map((id) => columnIndex(table, id)).filter((index) => index >= 0);
}

/**
 * The part of the average step no component covers, so the shares add to 100% (issue 28: they
 * added to 91.1%); null when the components already cover the step (within 0.5%).
 */
function unaccounted(components: readonly ComponentStat[], averageMs: number): ComponentStat | null {
  const covered = components.reduce((sum, c) => sum + c.averageMs, 0);
  const rest = averageMs - covered;
  if (!(averageMs > 0) || rest <= averageMs * 0.005) return null;
  return { id: 'unaccounted', label: 'Other (not in any component)', color: '#9aa0a6', averageMs: rest, deviationMs: NaN, percent: (100 * rest) / averageMs };
}

export function stepTimeModel(table: DataTable): StepTimeModel {
  const rows = tableRows(table);
  const stepIndex = columnIndex(table, 'stepnum');
  const tooltipIndex = columnIndex(table, 'tooltip');
  const totalIndex = columnIndex(table, 'stepTimeMs');
  const columns = componentColumns(table);
  const series = columns.map((index, position) => {
    const column = table.cols[index];
    return {
      id: column.id ?? '',
      name: column.label || column.id || `Component ${position + 1}`,
      color: STEP_COLORS[column.id ?? ''] ?? PALETTE[position % PALETTE.length],
      values: rows.map((row) => numberAt(row, index)),
    };
  });
  const totals = rows.map((row, i) =>
    totalIndex >= 0 ? numberAt(row, totalIndex) : series.reduce((sum, s) => sum + s.values[i], 0),
  );
  const stats = spread(totals);
  const averageMs = orElse(propertyNumber(table, 'steptime_ms_average'), stats.mean);
  const components = series
    .map((s) => {
      const key = COMPONENT_KEYS.find(([id]) => id === s.id)?.[1];
      const avg = key ? propertyNumber(table, `${key}_time_ms_avg`) : NaN;
      const sdv = key ? propertyNumber(table, `${key}_time_ms_sdv`) : NaN;
      const own = spread(s.values);
      const averageComponent = orElse(avg, own.mean);
      return {
        id: s.id,
        label: s.name,
        color: s.color,
        averageMs: averageComponent,
        deviationMs: orElse(sdv, own.deviation),
        percent: averageMs > 0 ? (100 * averageComponent) / averageMs : 0,
      };
    })
    .filter((c) => c.averageMs > 0);
  const remainder = unaccounted(components, averageMs);
  if (remainder) components.push(remainder);
  return {
    steps: rows.length,
    averageMs,
    minimumMs: orElse(propertyNumber(table, 'steptime_ms_minimum'), stats.min),
    maximumMs: orElse(propertyNumber(table, 'steptime_ms_maximum'), stats.max),
    deviationMs: orElse(propertyNumber(table, 'steptime_ms_standard_deviation'), stats.deviation),
    hardwareType: property(table, 'hardware_type'),
    components,
    chart: {
      categories: rows.map((row, i) => (stepIndex >= 0 ? stringAt(row, stepIndex) : String(i + 1))),
      series: series.filter((s) => s.values.some((v) => v > 0)).map(({ name, color, values }) => ({ name, color, values })),
      unit: 'ms',
      axisLabel: 'Step time (ms)',
      tooltips: tooltipIndex >= 0 ? rows.map((row) => stringAt(row, tooltipIndex)) : undefined,
    },
    conclusion: property(table, 'input_conclusion'),
    nextStep: property(table, 'summary_nextstep'),
  };
}

function orElse(value: number, fallback: number): number {
  return Number.isFinite(value) ? value : fallback;
}

export function spread(values: readonly number[]): { mean: number; min: number; max: number; deviation: number } {
  if (values.length === 0) return { mean: 0, min: 0, max: 0, deviation: 0 };
  const mean = values.reduce((sum, v) => sum + v, 0) / values.length;
  const variance = values.reduce((sum, v) => sum + (v - mean) ** 2, 0) / values.length;
  return { mean, min: Math.min(...values), max: Math.max(...values), deviation: Math.sqrt(variance) };
}
