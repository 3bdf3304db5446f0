/**
 * tfprof's display options of the tree views (op_types, scope_view, code_view), as the page
 * holds them and as query parameters of `data`, `data_csv` and the pprof download (see
 * tools/tree_options.py and docs/tfprof_views.md). The server applies them; the page only
 * keeps the form's values and turns them into parameters, leaving defaults out.
 *
 *   const params = optionParams({ ...DEFAULT_TREE_OPTIONS, orderBy: 'name', maxDepth: '2' });
 *   // { order_by: 'name', max_depth: '2' }
 */

export interface TreeOptions {
  orderBy: string;
  maxDepth: string;
  minMicros: string;
  show: string;
  hide: string;
  account: string;
  /** Column ids to show; empty: every column. */
  columns: string[];
}

export const DEFAULT_TREE_OPTIONS: TreeOptions = {
  orderBy: 'total_time_us',
  maxDepth: '',
  minMicros: '',
  show: '',
  hide: '',
  account: '',
  columns: [],
};

/** The tree's value columns in display order: id (the server's), header, tfprof's name. */
export const TREE_COLUMNS: { id: string; label: string; tfprof?: string }[] = [
  { id: 'total_time_us', label: 'Total time (ms)', tfprof: 'micros' },
  { id: 'total_time_percent', label: 'Share' },
  { id: 'self_time_us', label: 'Self time (ms)' },
  { id: 'device_time_us', label: 'Accelerator (ms)', tfprof: 'accelerator_micros' },
  { id: 'host_time_us', label: 'CPU (ms)', tfprof: 'cpu_micros' },
  { id: 'occurrences', label: 'Occurrences', tfprof: 'occurrence' },
  { id: 'ops', label: 'Ops' },
  { id: 'bytes', label: 'Bytes', tfprof: 'bytes' },
];

/** Views with a pprof form (a call-stack-like tree). */
export const PPROF_VIEWS = new Set(['scope_view', 'code_view']);

/** The options as query parameters; defaults and blanks are left out. */
export function optionParams(options: TreeOptions): Record<string, string> {
  const params: Record<string, string> = {};
  if (options.orderBy && options.orderBy !== DEFAULT_TREE_OPTIONS.orderBy) params.order_by = options.orderBy;
  const text: [keyof TreeOptions, string][] = [
    ['maxDepth', 'max_depth'],
    ['minMicros', 'min_micros'],
    ['show', 'show_name_regexes'],
    ['hide', 'hide_name_regexes'],
    ['account', 'account_type_regexes'],
  ];
  for (const [field, name] of text) {
    const value = String(options[field]).trim();
    if (value) params[name] = value;
  }
  const all = TREE_COLUMNS.map((c) => c.id);
  if (options.columns.length && options.columns.length < all.length) {
    params.select = all.filter((id) => options.columns.includes(id)).join(',');
  }
  return params;
}

/** Whether a column is shown under these options. */
export function columnShown(options: TreeOptions, id: string): boolean {
  return !options.columns.length || options.columns.includes(id);
}

/** The order after a click on a column header: that column (the server sorts names A to Z, numbers largest first). */
export function orderAfterClick(options: TreeOptions, column: string): TreeOptions {
  const server = column === 'total_time_percent' ? 'total_time_us' : column;
  return { ...options, orderBy: server };
}
