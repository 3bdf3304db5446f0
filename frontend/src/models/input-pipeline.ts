/**
 * input_pipeline_analyzer (a list of DataTables found by column ids): the verdict, the
 * device-side step-time graph and statistics, the host-side input-time breakdown (from the
 * input-op table's `p` *_us keys), the input-op table and the recommendations.
 */
import type { PieModel } from './chart-models';
import type { DataTable } from '../table/datatable';
import { findTable, fractionsAsPercent, propertyNumber, rowObjects, tableIndex } from './gviz';
import { diagnosticsOf, type Diagnostic } from './overview';
import { stepTimeModel, type StepTimeModel } from './step-time';

/** Host-side input time categories: `p` key → label (upstream's wording). */
export const HOST_INPUT_CATEGORIES: [string, string][] = [
  ['enqueue_us', 'Enqueuing data to the device'],
  ['demanded_file_read_us', 'Reading data from files on demand'],
  ['advanced_file_read_us', 'Reading data from files in advance'],
  ['preprocessing_us', 'Data preprocessing'],
  ['unclassified_nonequeue_us', 'Other data reading or processing'],
];

export interface InputPipelineModel {
  stepTime: StepTimeModel | null;
  hostBreakdown: PieModel;
  hostInputMs: number;
  inputOps: DataTable | undefined;
  inputOpsIndex: number;
  recommendations: string[];
  diagnostics: Diagnostic[];
}

/** Column labels that fit a table and say what the numbers are (upstream's are sentences). */
const INPUT_OP_LABELS: Record<string, string> = {
  opName: 'Input op',
  timeInMs: 'Total time (ms)',
  timeInPercent: 'Total time (% of input time)',
  selfTimeInMs: 'Self time (ms)',
  selfTimeInPercent: 'Self time (% of input time)',
};
/** Columns whose values are fractions although their labels say "%". */
const FRACTION_COLUMNS = new Set(['timeInPercent', 'selfTimeInPercent']);

/** The input-op table as shown: percentages as percentages, short labels. */
export function inputOpsForDisplay(table: DataTable): DataTable {
  const shown = fractionsAsPercent(table, FRACTION_COLUMNS);
  return { ...shown, cols: table.cols.map((c) => ({ ...c, label: INPUT_OP_LABELS[c.id ?? ''] ?? c.label })) };
}

export function inputPipelineModel(payload: unknown): InputPipelineModel {
  const stepTable = findTable(payload, ['stepnum', 'stepTimeMs']) ?? findTable(payload, ['stepnum']);
  const inputOps = findTable(payload, ['opName', 'selfTimeInMs']);
  const linkTable = (Array.isArray(payload) ? payload : []).find(
    (t): t is DataTable => !!t && Array.isArray((t as DataTable).cols) && (t as DataTable).cols.length === 1 && (t as DataTable).cols[0].id === 'link',
  );
  const slices = HOST_INPUT_CATEGORIES.map(([key, name]) => ({ name, value: propertyNumber(inputOps, key) / 1000 })).map((s) => ({
    ...s,
    value: Number.isFinite(s.value) ? s.value : 0,
  }));
  return {
    stepTime: stepTable ? stepTimeModel(stepTable) : null,
    hostBreakdown: { title: 'Host-side input time', slices: slices.filter((s) => s.value > 0), unit: 'ms' },
    hostInputMs: slices.reduce((sum, s) => sum + s.value, 0),
    inputOps: inputOps && inputOpsForDisplay(inputOps),
    inputOpsIndex: tableIndex(payload, inputOps),
    recommendations: linkTable ? rowObjects(linkTable).map((row) => String(row.link ?? '')).filter(Boolean) : [],
    diagnostics: diagnosticsOf(findTable(payload, ['severity', 'message'])),
  };
}
