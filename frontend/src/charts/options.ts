/**
 * Pure functions from chart models to ECharts options (no DOM, no ECharts import at run time),
 * so they are unit-tested. Every tooltip is plain text drawn on the canvas (`renderMode:
 * 'richText'`): a formatter returns a string, never markup, and profile strings stay text.
 */
import type { EChartsOption } from 'echarts';
import { PALETTE, type PieModel, type PieSlice, type StackedBarModel, type TimelineChartModel } from '../models/chart-models';
import { distinctShortNames } from '../models/names';
import { formatCompact, formatNumber } from '../format';
import type { ChartTheme } from './theme';

export type ChartOption = EChartsOption;

/** Most label text ECharts draws before truncating with an ellipsis. */
const LABEL_CHARS = 40;

export function clipLabel(text: string, max = LABEL_CHARS): string {
  return text.length > max ? text.slice(0, max - 1) + '…' : text;
}

/** Characters of a pie legend entry (long names get their distinct short form, models/names.ts). */
const LEGEND_CHARS = 52;

export function tooltipBase(theme: ChartTheme) {
  return {
    renderMode: 'richText' as const,
    confine: true,
    backgroundColor: theme.surface,
    borderColor: theme.border,
    textStyle: { color: theme.text, fontSize: 12 },
  };
}

function legendBase(theme: ChartTheme) {
  return {
    type: 'scroll' as const,
    textStyle: { color: theme.text },
    pageTextStyle: { color: theme.muted },
    pageIconColor: theme.text,
    pageIconInactiveColor: theme.border,
    inactiveColor: theme.border,
  };
}

/** Tooltip text of one stacked bar: total, then each non-zero component, largest first. */
export function stackedTooltip(model: StackedBarModel, index: number): string {
  if (model.tooltips?.[index]) return model.tooltips[index];
  const parts = model.series
    .map((s) => ({ name: s.name, value: s.values[index] ?? 0 }))
    .filter((p) => p.value > 0)
    .sort((a, b) => b.value - a.value);
  const total = parts.reduce((sum, p) => sum + p.value, 0);
  const lines = parts.map((p) => `${p.name}: ${formatNumber(p.value)} ${model.unit}`);
  return [`${model.categories[index] ?? ''} — total ${formatNumber(total)} ${model.unit}`, ...lines].join('\n');
}

export function stackedBarOption(model: StackedBarModel, theme: ChartTheme): ChartOption {
  return {
    animation: false,
    grid: { left: 12, right: 16, top: 40, bottom: 8, containLabel: true },
    legend: { ...legendBase(theme), top: 0 },
    tooltip: {
      ...tooltipBase(theme),
      trigger: 'axis',
      axisPointer: { type: 'shadow' },
      formatter: (params: unknown) => {
        const first = Array.isArray(params) ? params[0] : params;
        return stackedTooltip(model, (first as { dataIndex?: number })?.dataIndex ?? 0);
      },
    },
    xAxis: {
      type: 'category',
      data: model.categories.map((c) => clipLabel(c, 24)),
      axisLabel: { color: theme.text },
      axisLine: { lineStyle: { color: theme.border } },
    },
    yAxis: {
      type: 'value',
      name: model.axisLabel,
      nameTextStyle: { color: theme.muted, align: 'left' },
      axisLabel: { color: theme.text, formatter: formatCompact },
      splitLine: { lineStyle: { color: theme.border, opacity: 0.6 } },
    },
    series: model.series.map((s) => ({
      type: 'bar' as const,
      name: s.name,
      stack: 'total',
      data: s.values,
      itemStyle: { color: s.color },
      emphasis: { focus: 'series' as const },
      barMaxWidth: 48,
    })),
  };
}

export function pieTooltip(slice: PieSlice, total: number, unit: string): string {
  const share = total > 0 ? (100 * slice.value) / total : 0;
  return `${slice.name}\n${formatNumber(slice.value)} ${unit} (${formatNumber(Math.round(share * 10) / 10)}%)`;
}

export function pieOption(model: PieModel, theme: ChartTheme): ChartOption {
  const total = model.slices.reduce((sum, s) => sum + s.value, 0);
  const names = model.slices.map((s) => s.name);
  const short = distinctShortNames(names, LEGEND_CHARS);
  const legendNames = new Map(names.map((name, i) => [name, short[i]]));
  return {
    animation: false,
    color: PALETTE,
    legend: {
      ...legendBase(theme),
      orient: 'vertical',
      right: 0,
      top: 'middle',
      formatter: (name: string) => legendNames.get(name) ?? name,
    },
    tooltip: {
      ...tooltipBase(theme),
      trigger: 'item',
      formatter: (params: unknown) => {
        const p = params as { name: string; value: number };
        return pieTooltip({ name: p.name, value: p.value }, total, model.unit);
      },
    },
    series: [
      {
        type: 'pie',
        name: model.title,
        radius: ['32%', '64%'],
        center: ['24%', '50%'],
        label: { show: false },
        itemStyle: { borderColor: theme.background, borderWidth: 1 },
        data: model.slices.map((s) => ({ name: s.name, value: s.value })),
      },
    ],
  };
}

/** Stacked areas over time with an optional line on a second axis (memory timeline). */
export function timelineOption(model: TimelineChartModel, theme: ChartTheme): ChartOption {
  const axis = (name: string) => ({
    type: 'value' as const,
    name,
    nameTextStyle: { color: theme.muted },
    axisLabel: { color: theme.text, formatter: formatCompact },
    splitLine: { lineStyle: { color: theme.border, opacity: 0.6 } },
  });
  return {
    animation: false,
    grid: { left: 12, right: 12, top: 48, bottom: 28, containLabel: true },
    legend: {
      ...legendBase(theme),
      top: 0,
      selected: Object.fromEntries(model.series.map((s) => [s.name, !s.hidden])),
    },
    tooltip: {
      ...tooltipBase(theme),
      trigger: 'axis',
      formatter: (params: unknown) => {
        const first = Array.isArray(params) ? params[0] : params;
        return model.tooltip((first as { dataIndex?: number })?.dataIndex ?? 0);
      },
    },
    xAxis: {
      ...axis(model.xLabel),
      min: 'dataMin',
      max: 'dataMax',
      nameLocation: 'middle',
      nameGap: 26,
      axisLabel: { color: theme.text, formatter: (value: number) => formatNumber(Math.round(value * 10) / 10), showMinLabel: false, showMaxLabel: false },
      splitLine: { show: false },
    },
    yAxis: [axis(model.leftLabel), { ...axis(model.rightLabel), min: 0, max: 100, splitLine: { show: false } }],
    series: model.series.map((s) => ({
      type: 'line' as const,
      name: s.name,
      data: s.data,
      yAxisIndex: s.rightAxis ? 1 : 0,
      stack: s.area ? 'memory' : undefined,
      areaStyle: s.area ? { color: s.color, opacity: 0.55 } : undefined,
      lineStyle: { color: s.color, width: s.area ? 1 : 1.5 },
      itemStyle: { color: s.color },
      showSymbol: false,
      step: s.area ? ('end' as const) : undefined,
      sampling: 'lttb' as const,
    })),
  };
}
