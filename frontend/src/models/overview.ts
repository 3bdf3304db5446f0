/**
 * overview_page → the Overview dashboard model: performance summary, step-time graph, top
 * operations, run environment, recommendation and diagnostics. Tables are found by column ids
 * (upstream's positions: 0 analysis, 1 step time, 2 environment, 3 recommendation, 4 inference
 * latency, 6 diagnostics).
 */
import { formatMs } from '../format';
import { runToolFor } from '../tools';
import { tableRows, type DataTable } from '../table/datatable';
import { findTable, property, propertyNumber, rowObjects } from './gviz';
import { stepTimeModel, type StepTimeModel } from './step-time';

export interface Metric {
  label: string;
  value: string;
  hint?: string;
}

export interface Tip {
  /** Group heading (the row's description), e.g. "Next steps for reducing the Host time". */
  group: string;
  /** Raw text, possibly with an upstream `<a>`; the view renders it as segments. */
  text: string;
  /** The tool the tip names at its start (e.g. `input_pipeline_analyzer`), if any. */
  tool?: string;
}

export interface Diagnostic {
  severity: string;
  message: string;
}

export interface OverviewModel {
  summary: Metric[];
  stepTime: StepTimeModel | null;
  environment: Metric[];
  hosts: Record<string, unknown>[];
  bottleneck: string;
  statement: string;
  precisionStatement: string;
  /** The framework that made the profile (`JAX`, `TensorFlow`; '' when unknown). */
  framework: string;
  tips: Tip[];
  diagnostics: Diagnostic[];
  analysis: DataTable | undefined;
  inferenceLatency: DataTable | undefined;
  remark: string;
}

const ANALYSIS = ['selfTimePercent', 'operation'];
const STEP_TIME = ['stepnum'];
const ENVIRONMENT = ['host_id', 'command_line'];
const RECOMMENDATION = ['tip_type', 'link'];
const INFERENCE = ['percentile', 'totalTimeMs'];
const DIAGNOSTICS = ['severity', 'message'];

export function toolOfTip(text: string, tools: readonly string[]): string | undefined {
  const word = /^\s*([a-z_]+)/.exec(text)?.[1];
  return word ? runToolFor(word, tools) : undefined;
}

/** Shown instead of a number for a metric the profile's hardware does not have. */
export const NOT_APPLICABLE = 'n/a';

/** Why TF-op metrics are n/a on a profile without TensorFlow ops. */
export const NO_FRAMEWORK_OPS = 'No TensorFlow op was recorded (a JAX program records XLA ops: see HLO stats)';

function percentMetric(analysis: DataTable | undefined, key: string, label: string, hint?: string): Metric | null {
  const text = property(analysis, key);
  if (!text || !Number.isFinite(propertyNumber(analysis, key))) return null;
  return { label, value: text, hint };
}

/**
 * Device metrics of a profile without an accelerator, and MXU metrics off TPU, are "n/a":
 * upstream writes 0.0% for them, which reads as "the device sat idle".
 */
function applicable(metric: Metric | null, applies: boolean, why: string): Metric | null {
  return metric && !applies ? { label: metric.label, value: NOT_APPLICABLE, hint: why } : metric;
}

function summaryMetrics(analysis: DataTable | undefined, step: StepTimeModel | null): Metric[] {
  const hardware = step?.hardwareType || property(analysis, 'hardware_type');
  const device = hardware !== '' && hardware !== 'CPU_ONLY';
  const noDevice = 'The profile has no accelerator';
  const onDevice = (m: Metric | null) => applicable(m, device, noDevice);
  // Host and device shares of TensorFlow ops are both 0 only when no op was counted (they add
  // to 100% otherwise): a JAX program's XLA ops are not TensorFlow ops.
  const hasFrameworkOps = !(
    propertyNumber(analysis, 'host_tf_op_percent') === 0 && propertyNumber(analysis, 'device_tf_op_percent') === 0
  );
  const onFrameworkOps = (m: Metric | null) => applicable(m, hasFrameworkOps, NO_FRAMEWORK_OPS);
  const metrics: (Metric | null)[] = [];
  if (step && step.steps > 0) {
    metrics.push({
      label: 'Average step time',
      value: formatMs(step.averageMs),
      hint: `σ ${formatMs(step.deviationMs)} · min ${formatMs(step.minimumMs)} · max ${formatMs(step.maximumMs)} over ${step.steps} steps`,
    });
  }
  const bits16 = propertyNumber(analysis, 'device_compute_16bit_percent');
  const bits32 = propertyNumber(analysis, 'device_compute_32bit_percent');
  if (Number.isFinite(bits16) || Number.isFinite(bits32)) {
    metrics.push(
      onDevice({
        label: 'Device compute precision',
        value: `${property(analysis, 'device_compute_16bit_percent') || '0%'} 16-bit · ${property(analysis, 'device_compute_32bit_percent') || '0%'} 32-bit`,
        hint: 'Share of device compute time in 16-bit and 32-bit operations',
      }),
    );
  }
  metrics.push(
    onDevice(percentMetric(analysis, 'device_duty_cycle_percent', 'Device duty cycle', 'Time the device was busy')),
    onDevice(percentMetric(analysis, 'device_idle_time_percent', 'Device idle time')),
    percentMetric(analysis, 'host_idle_time_percent', 'Host idle time'),
    onFrameworkOps(percentMetric(analysis, 'host_tf_op_percent', 'Ops placed on host', 'Share of framework op time on the host')),
    onDevice(onFrameworkOps(percentMetric(analysis, 'device_tf_op_percent', 'Ops placed on device'))),
    onFrameworkOps(percentMetric(analysis, 'host_op_time_eager_percent', 'Host op time eager')),
    onDevice(onFrameworkOps(percentMetric(analysis, 'device_op_time_eager_percent', 'Device op time eager'))),
    applicable(percentMetric(analysis, 'mxu_utilization_percent', 'MXU utilization'), hardware === 'TPU', 'MXUs are TPU units'),
    onDevice(percentMetric(analysis, 'flop_rate_utilization_relative_to_roofline', 'FLOP rate vs roofline')),
    onDevice(percentMetric(analysis, 'memory_bw_utilization_relative_to_hw_limit', 'Memory bandwidth vs limit')),
  );
  // One "why n/a" is enough: later metrics n/a for the same reason go without the hint.
  const said = new Set<string>();
  return metrics
    .filter((m): m is Metric => m !== null)
    .map((m) => {
      if (m.value !== NOT_APPLICABLE || !m.hint) return m;
      if (said.has(m.hint)) return { label: m.label, value: m.value };
      said.add(m.hint);
      return m;
    });
}

function environmentMetrics(environment: DataTable | undefined): Metric[] {
  const pairs: [string, string][] = [
    ['Number of hosts', 'host_count'],
    ['Tasks', 'task_count'],
    ['Device type', 'device_type'],
    ['Device cores', 'device_core_count'],
    ['Training', 'is_training'],
  ];
  return pairs
    .map(([label, key]) => ({ label, value: property(environment, key) }))
    .filter((metric) => metric.value !== '');
}

export function overviewModel(payload: unknown, tools: readonly string[] = []): OverviewModel {
  const analysis = findTable(payload, ANALYSIS);
  const stepTable = findTable(payload, STEP_TIME);
  const environment = findTable(payload, ENVIRONMENT);
  const recommendation = findTable(payload, RECOMMENDATION);
  const inference = findTable(payload, INFERENCE);
  const diagnostics = findTable(payload, DIAGNOSTICS);
  const stepTime = stepTable ? stepTimeModel(stepTable) : null;
  const tips: Tip[] = recommendation
    ? rowObjects(recommendation)
        .map((row) => {
          const text = String(row.link ?? '');
          return { group: String(row.description ?? ''), text, tool: toolOfTip(text, tools) };
        })
        .filter((tip) => tip.text)
    : [];
  const framework = property(recommendation, 'framework');
  return {
    summary: summaryMetrics(analysis, stepTime),
    stepTime,
    environment: environmentMetrics(environment),
    hosts: environment ? rowObjects(environment) : [],
    bottleneck: property(recommendation, 'bottleneck'),
    statement: property(recommendation, 'statement') || stepTime?.conclusion || '',
    precisionStatement: property(recommendation, 'precision_statement'),
    framework,
    tips: tipsFor(framework, tips),
    diagnostics: diagnosticsOf(diagnostics),
    analysis,
    inferenceLatency: inference && tableRows(inference).length ? inference : undefined,
    remark: property(analysis, 'remark_text'),
  };
}

export function diagnosticsOf(table: DataTable | undefined): Diagnostic[] {
  if (!table) return [];
  return rowObjects(table)
    .map((row) => ({ severity: String(row.severity ?? ''), message: String(row.message ?? '') }))
    .filter((d) => d.message);
}

const link = (href: string, text: string) => `<a href="${href}">${text}</a>`;

/** Where each framework documents profiling; the converter's tips name TensorFlow's for all. */
const FRAMEWORK_DOCS: Record<string, { faq: string; resources: string[] }> = {
  TensorFlow: {
    faq: link('https://www.tensorflow.org/guide/profiler#faq', 'Refer to the TF2 Profiler FAQ'),
    resources: [],
  },
  JAX: {
    faq: link('https://docs.jax.dev/en/latest/profiling.html', 'Profiling JAX programs'),
    resources: [link('https://docs.jax.dev/en/latest/device_memory_profiling.html', 'Profiling device memory in JAX')],
  },
};

/**
 * The tips worded for the framework: its FAQ, and its resources instead of the tf.data guides
 * (a JAX program has no tf.data pipeline to tune). Unknown frameworks keep the converter's tips.
 */
export function tipsFor(framework: string, tips: readonly Tip[]): Tip[] {
  const docs = FRAMEWORK_DOCS[framework];
  if (!docs) return [...tips];
  const out: Tip[] = [];
  let resourcesAdded = docs.resources.length === 0;
  for (const tip of tips) {
    if (/TF2 Profiler FAQ/.test(tip.text)) out.push({ ...tip, text: docs.faq });
    else if (!resourcesAdded && /tensorflow\.org\/guide\/data/.test(tip.text)) {
      out.push(...docs.resources.map((text) => ({ group: tip.group, text })));
      resourcesAdded = true;
    } else if (!(docs.resources.length && /tensorflow\.org\/guide\/data/.test(tip.text))) out.push(tip);
  }
  return out;
}

/** Tips grouped by their heading, in first-seen order. */
export function groupTips(tips: readonly Tip[]): [string, Tip[]][] {
  const groups = new Map<string, Tip[]>();
  for (const tip of tips) {
    const list = groups.get(tip.group) ?? [];
    list.push(tip);
    groups.set(tip.group, list);
  }
  return [...groups.entries()];
}
