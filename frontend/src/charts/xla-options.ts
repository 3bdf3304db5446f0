/**
 * Chart options of the XLA tools: the memory viewer's heap over program order (peak marked) and
 * its peak buffers, and the roofline. Pure, like `options.ts`; tooltips are rich text.
 */
import { PALETTE } from '../models/chart-models';
import type { HeapChartModel, PeakBar } from '../models/xla';
import { formatCompact, formatNumber } from '../format';
import { clipLabel, tooltipBase, type ChartOption } from './options';
import type { ChartTheme } from './theme';

function valueAxis(name: string, theme: ChartTheme) {
  return {
    type: 'value' as const,
    name,
    nameTextStyle: { color: theme.muted },
    axisLabel: { color: theme.text, formatter: formatCompact },
    splitLine: { lineStyle: { color: theme.border, opacity: 0.6 } },
  };
}

const mib = (v: number) => `${formatNumber(Math.round(v * 1000) / 1000)} MiB`;

export function heapTooltip(model: HeapChartModel, index: number): string {
  const op = model.ops[index] ? `\n${model.ops[index]}` : '';
  return `Step ${index}: ${mib(model.heap[index] ?? 0)} (unpadded ${mib(model.unpadded[index] ?? 0)})${op}`;
}

export function heapOption(model: HeapChartModel, theme: ChartTheme): ChartOption {
  return {
    animation: false,
    grid: { left: 12, right: 24, top: 40, bottom: 28, containLabel: true },
    legend: { top: 0, textStyle: { color: theme.text } },
    tooltip: {
      ...tooltipBase(theme),
      trigger: 'axis',
      formatter: (params: unknown) => {
        const first = Array.isArray(params) ? params[0] : params;
        return heapTooltip(model, (first as { dataIndex?: number })?.dataIndex ?? 0);
      },
    },
    xAxis: { ...valueAxis('Program order (heap simulator step)', theme), nameLocation: 'middle', nameGap: 26, min: 0, max: Math.max(model.steps.length - 1, 1) },
    yAxis: valueAxis('MiB', theme),
    series: [
      {
        type: 'line',
        name: 'Heap',
        showSymbol: false,
        step: 'end',
        data: model.steps.map((s) => [s, model.heap[s]]),
        lineStyle: { color: PALETTE[0] },
        itemStyle: { color: PALETTE[0] },
        markLine: {
          silent: true,
          symbol: 'none',
          label: { color: theme.text, formatter: `Peak ${mib(model.peakMib)}` },
          lineStyle: { color: PALETTE[3], type: 'dashed' },
          data: [{ xAxis: model.peakStep + 1 }],
        },
      },
      {
        type: 'line',
        name: 'Unpadded',
        showSymbol: false,
        step: 'end',
        data: model.steps.map((s) => [s, model.unpadded[s]]),
        lineStyle: { color: PALETTE[1], type: 'dotted' },
        itemStyle: { color: PALETTE[1] },
      },
    ],
  };
}

export function peakBarsOption(bars: readonly PeakBar[], theme: ChartTheme): ChartOption {
  const names = bars.map((b) => b.name);
  return {
    animation: false,
    grid: { left: 12, right: 24, top: 8, bottom: 24, containLabel: true },
    tooltip: {
      ...tooltipBase(theme),
      trigger: 'item',
      formatter: (params: unknown) => {
        const bar = bars[(params as { dataIndex?: number })?.dataIndex ?? 0];
        return bar ? `${bar.name}: ${mib(bar.sizeMib)}\n${bar.detail}` : '';
      },
    },
    xAxis: valueAxis('MiB', theme),
    yAxis: { type: 'category', inverse: true, data: names, axisLabel: { color: theme.text, formatter: (v: string) => clipLabel(v, 32) } },
    series: [{ type: 'bar', data: bars.map((b) => b.sizeMib), itemStyle: { color: PALETTE[2] } }],
  };
}

export interface RooflinePoint {
  name: string;
  intensity: number;
  gflops: number;
}

export interface RooflineModel {
  points: RooflinePoint[];
  peakGflops: number;
  peakGibS: number;
}

/** The roof from the smallest to the largest intensity shown: bandwidth slope, then the peak. */
export function roofLine(model: RooflineModel): [number, number][] {
  const xs = model.points.map((p) => p.intensity).filter((x) => x > 0);
  const ridge = model.peakGflops / model.peakGibS;
  const lo = Math.min(ridge / 10, ...xs);
  const hi = Math.max(ridge * 10, ...xs);
  return [
    [lo, lo * model.peakGibS],
    [ridge, model.peakGflops],
    [hi, model.peakGflops],
  ];
}

export function rooflineOption(model: RooflineModel, theme: ChartTheme): ChartOption {
  const log = (name: string) => ({ ...valueAxis(name, theme), type: 'log' as const, nameLocation: 'middle' as const, nameGap: 28 });
  const shown = model.points.filter((p) => p.intensity > 0 && p.gflops > 0);
  return {
    animation: false,
    grid: { left: 16, right: 24, top: 36, bottom: 40, containLabel: true },
    legend: { top: 0, textStyle: { color: theme.text } },
    tooltip: {
      ...tooltipBase(theme),
      trigger: 'item',
      formatter: (params: unknown) => {
        const p = shown[(params as { dataIndex?: number; seriesIndex?: number })?.dataIndex ?? 0];
        return (params as { seriesIndex?: number }).seriesIndex === 1 && p
          ? `${p.name}\n${formatNumber(p.intensity)} FLOP/byte, ${formatNumber(p.gflops)} GFLOP/s`
          : 'Roofline';
      },
    },
    xAxis: log('Operational intensity (FLOP/byte)'),
    yAxis: log('GFLOP/s'),
    series: [
      { type: 'line', name: 'Roofline', data: roofLine(model), showSymbol: false, lineStyle: { color: PALETTE[3] } },
      { type: 'scatter', name: 'HLO ops', data: shown.map((p) => [p.intensity, p.gflops]), itemStyle: { color: PALETTE[0] } },
    ],
  };
}
