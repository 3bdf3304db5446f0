/**
 * pod_viewer (proto-JSON `PodViewerDatabase`): for one step, a stacked bar per core of the
 * step-time breakdown (`stepBreakdownUs`, keyed by `stepBreakdownEvents` ids), and the details
 * of a core for the hover card.
 */
import { INPUT_RED, PALETTE, type StackedBarModel } from './chart-models';
import type { Diagnostic } from './overview';
import { STEP_COLORS } from './step-time';

interface CoreStats {
  hostName?: string;
  chipId?: number;
  nodeId?: number;
  stepNum?: number;
  totalDurationUs?: number;
  bottleneck?: string;
  stepBreakdownUs?: Record<string, number>;
}

interface StepStats {
  stepNum?: number;
  podStatsPerCore?: Record<string, CoreStats>;
}

export interface PodViewerPayload {
  podStatsSequence?: { podStatsMap?: StepStats[] };
  stepBreakdownEvents?: { id: number; name: string }[];
  diagnostics?: { info?: string[]; warnings?: string[]; errors?: string[] };
  deviceType?: string;
}

export function isPodViewer(payload: unknown): payload is PodViewerPayload {
  return !!payload && typeof payload === 'object' && 'podStatsSequence' in payload;
}

/** Step-breakdown event names → the colours the step-time graphs use. */
const NAME_COLORS: Record<string, string> = {
  'Device compute': STEP_COLORS.deviceComputeTimeMs,
  'Device to device': STEP_COLORS.deviceToDeviceTimeMs,
  'Device collective communication': STEP_COLORS.deviceCollectivesTimeMs,
  'Host compute': STEP_COLORS.hostComputeTimeMs,
  'Kernel launch': STEP_COLORS.kernelLaunchTimeMs,
  Input: INPUT_RED,
  Output: STEP_COLORS.outfeedTimeMs,
  Compilation: STEP_COLORS.compileTimeMs,
  'All others': STEP_COLORS.otherTimeMs,
};

export interface CoreDetail {
  coreId: string;
  label: string;
  host: string;
  chipId: number;
  nodeId: number;
  totalMs: number;
  bottleneck: string;
  parts: { name: string; ms: number }[];
}

export interface PodStepModel {
  stepNum: number;
  chart: StackedBarModel;
  cores: CoreDetail[];
}

export function podSteps(payload: PodViewerPayload): StepStats[] {
  return payload.podStatsSequence?.podStatsMap ?? [];
}

export function podStepModel(payload: PodViewerPayload, stepIndex: number): PodStepModel | null {
  const step = podSteps(payload)[stepIndex];
  if (!step) return null;
  const events = payload.stepBreakdownEvents ?? [];
  const entries = Object.entries(step.podStatsPerCore ?? {}).sort((a, b) => Number(a[0]) - Number(b[0]));
  const cores: CoreDetail[] = entries.map(([coreId, stats]) => ({
    coreId,
    label: `${stats.hostName ?? '?'} core ${coreId}`,
    host: stats.hostName ?? '',
    chipId: stats.chipId ?? 0,
    nodeId: stats.nodeId ?? 0,
    totalMs: (stats.totalDurationUs ?? 0) / 1000,
    bottleneck: stats.bottleneck ?? '',
    parts: events
      .map((e) => ({ name: e.name, ms: (stats.stepBreakdownUs?.[String(e.id)] ?? 0) / 1000 }))
      .filter((p) => p.ms > 0)
      .sort((a, b) => b.ms - a.ms),
  }));
  const series = events
    .map((e, i) => ({
      name: e.name,
      color: NAME_COLORS[e.name] ?? PALETTE[i % PALETTE.length],
      values: entries.map(([, stats]) => (stats.stepBreakdownUs?.[String(e.id)] ?? 0) / 1000),
    }))
    .filter((s) => s.values.some((v) => v > 0));
  return {
    stepNum: step.stepNum ?? stepIndex,
    cores,
    chart: {
      categories: cores.map((c) => c.label),
      series,
      unit: 'ms',
      axisLabel: 'Step time (ms)',
      tooltips: cores.map((c) => coreText(c)),
    },
  };
}

export function coreText(core: CoreDetail): string {
  return [
    `${core.label} — ${core.totalMs.toFixed(3)} ms`,
    `Bottleneck: ${core.bottleneck || '—'}`,
    ...core.parts.map((p) => `${p.name}: ${p.ms.toFixed(3)} ms`),
  ].join('\n');
}

export function podDiagnostics(payload: PodViewerPayload): Diagnostic[] {
  const d = payload.diagnostics ?? {};
  return [
    ...(d.errors ?? []).map((message) => ({ severity: 'ERROR', message })),
    ...(d.warnings ?? []).map((message) => ({ severity: 'WARNING', message })),
    ...(d.info ?? []).map((message) => ({ severity: 'INFO', message })),
  ];
}
