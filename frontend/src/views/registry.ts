/**
 * Which component shows which tool.
 *
 * Tool-specific views are matched by tool name; when none matches (or it declines the payload),
 * generic views are matched by the payload's shape: DataTable(s) → table view, anything else →
 * JSON view. Views are loaded lazily, so each lands in its own chunk. A later registration for
 * the same tool wins, which is how a full trace viewer can replace the summary view:
 *
 *   registerToolView({ id: 'trace-canvas', matchesTool: isTraceTool, ownData: true,
 *                      load: async () => (await import('./trace-canvas-view')).TAG });
 */
import { isDataTable, isDataTableList } from '../table/datatable';
import { isTool } from '../tools';

export interface ViewEntry {
  id: string;
  /** Tool-specific entries: does this view handle the tool? */
  matchesTool?: (tool: string) => boolean;
  /** Does this view accept the payload? Tool entries without it accept everything. */
  matchesPayload?: (payload: unknown) => boolean;
  /** The view fetches its own data (e.g. a windowed trace viewer); the shell does not call `data`. */
  ownData?: boolean;
  /** Imports the module that defines the element and returns its tag name. */
  load: () => Promise<string>;
}

const toolViews: ViewEntry[] = [];
const genericViews: ViewEntry[] = [];

export function registerToolView(entry: ViewEntry): void {
  toolViews.unshift(entry);
}

export function registerGenericView(entry: ViewEntry): void {
  genericViews.push(entry);
}

export function viewForTool(tool: string): ViewEntry | undefined {
  return toolViews.find((entry) => entry.matchesTool?.(tool));
}

export function viewForPayload(payload: unknown, toolView?: ViewEntry): ViewEntry | undefined {
  if (toolView && (toolView.matchesPayload?.(payload) ?? true)) return toolView;
  return genericViews.find((entry) => entry.matchesPayload?.(payload) ?? true);
}

export function isTraceTool(tool: string): boolean {
  return isTool(tool, 'trace_viewer');
}

export function isTablePayload(payload: unknown): boolean {
  return isDataTable(payload) || isDataTableList(payload);
}

/** The built-in views. Called once at start-up; tests may call `resetViews()` first. */
export function registerBuiltinViews(): void {
  registerGenericView({
    id: 'datatable',
    matchesPayload: isTablePayload,
    load: async () => (await import('./datatable-view')).DATATABLE_VIEW_TAG,
  });
  registerGenericView({
    id: 'json',
    load: async () => (await import('./json-view')).JSON_VIEW_TAG,
  });
  // The canvas timeline asks for windows itself; its Summary tab shows the whole-trace summary.
  registerToolView({
    id: 'trace-timeline',
    matchesTool: isTraceTool,
    ownData: true,
    load: async () => (await import('./trace-view')).TRACE_VIEW_TAG,
  });
  registerDashboards();
}

/** The listed tool stands for one of `names` (tools.ts: marks and legacy names). */
export function toolIs(...names: string[]): (tool: string) => boolean {
  return (tool) => isTool(tool, ...names);
}

const isList = (payload: unknown) => Array.isArray(payload);
const isObject = (payload: unknown) => !!payload && typeof payload === 'object' && !Array.isArray(payload);

/** The dashboards: one view per tool; each falls back to the generic views for other shapes. */
function registerDashboards(): void {
  registerToolView({
    id: 'overview',
    matchesTool: toolIs('overview_page'),
    matchesPayload: isList,
    load: async () => (await import('./overview-view')).OVERVIEW_VIEW_TAG,
  });
  registerToolView({
    id: 'op-stats',
    matchesTool: toolIs('framework_op_stats'),
    matchesPayload: isTablePayload,
    load: async () => (await import('./op-stats-view')).OP_STATS_VIEW_TAG,
  });
  registerToolView({
    id: 'kernel-stats',
    matchesTool: toolIs('kernel_stats'),
    matchesPayload: isTablePayload,
    load: async () => (await import('./kernel-stats-view')).KERNEL_STATS_VIEW_TAG,
  });
  registerToolView({
    id: 'input-pipeline',
    matchesTool: toolIs('input_pipeline_analyzer'),
    matchesPayload: isList,
    load: async () => (await import('./input-pipeline-view')).INPUT_PIPELINE_VIEW_TAG,
  });
  registerToolView({
    id: 'pytorch-overview',
    matchesTool: toolIs('pytorch_overview'),
    matchesPayload: isList,
    load: async () => (await import('./pytorch-overview-view')).PYTORCH_OVERVIEW_VIEW_TAG,
  });
  registerToolView({
    id: 'pytorch-operators',
    matchesTool: toolIs('pytorch_operators'),
    matchesPayload: isList,
    load: async () => (await import('./pytorch-operators-view')).PYTORCH_OPERATORS_VIEW_TAG,
  });
  registerToolView({
    id: 'memory-profile',
    matchesTool: toolIs('memory_profile'),
    matchesPayload: isObject,
    load: async () => (await import('./memory-profile-view')).MEMORY_PROFILE_VIEW_TAG,
  });
  registerToolView({
    id: 'pod-viewer',
    matchesTool: toolIs('pod_viewer'),
    matchesPayload: isObject,
    load: async () => (await import('./pod-viewer-view')).POD_VIEWER_VIEW_TAG,
  });
  registerToolView({
    id: 'tree-table',
    matchesTool: toolIs('op_types', 'scope_view', 'code_view'),
    matchesPayload: isTablePayload,
    load: async () => (await import('./tree-table-view')).TREE_TABLE_VIEW_TAG,
  });
  registerToolView({
    id: 'advisor',
    matchesTool: toolIs('advisor'),
    matchesPayload: isTablePayload,
    load: async () => (await import('./advisor-view')).ADVISOR_VIEW_TAG,
  });
  registerToolView({
    id: 'tf-data',
    matchesTool: toolIs('tf_data_bottleneck_analysis'),
    matchesPayload: isTablePayload,
    load: async () => (await import('./tf-data-view')).TF_DATA_VIEW_TAG,
  });
  registerXlaViews();
}

/** The XLA tools. The module-based ones fetch their own data (they need a module name). */
function registerXlaViews(): void {
  registerToolView({
    id: 'memory-viewer',
    matchesTool: toolIs('memory_viewer'),
    ownData: true,
    load: async () => (await import('./memory-viewer-view')).MEMORY_VIEWER_VIEW_TAG,
  });
  registerToolView({
    id: 'graph-viewer',
    matchesTool: toolIs('graph_viewer'),
    ownData: true,
    load: async () => (await import('./graph-viewer-view')).GRAPH_VIEWER_VIEW_TAG,
  });
  registerToolView({
    id: 'op-profile',
    matchesTool: toolIs('op_profile', 'hlo_op_profile'),
    matchesPayload: isObject,
    load: async () => (await import('./op-profile-view')).OP_PROFILE_VIEW_TAG,
  });
  registerToolView({
    id: 'hlo-stats',
    matchesTool: toolIs('hlo_stats', 'hlo_op_stats'),
    matchesPayload: isTablePayload,
    load: async () => (await import('./hlo-stats-view')).HLO_STATS_VIEW_TAG,
  });
  registerToolView({
    id: 'model-view',
    matchesTool: toolIs('model_view'),
    matchesPayload: isList,
    load: async () => (await import('./model-view-view')).MODEL_VIEW_TAG,
  });
  registerToolView({
    id: 'roofline',
    matchesTool: toolIs('roofline_model'),
    matchesPayload: isList,
    load: async () => (await import('./roofline-view')).ROOFLINE_VIEW_TAG,
  });
}

export function resetViews(): void {
  toolViews.length = 0;
  genericViews.length = 0;
}
