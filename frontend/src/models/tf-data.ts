/**
 * tf_data_bottleneck_analysis (three gviz tables): 0 the iterator graph of the slowest calls of
 * each input pipeline (org-chart rows: id, parent, type 1 = critical path, 2 = bottleneck),
 * 1 the statistics of every pipeline, 2 the bottleneck and suggestion per slow pipeline (`p`:
 * summary_message, is_input_bound).
 *
 * Upstream wrote node names and timings into HTML `f` fields; we read them as plain text only.
 * When a node has no parent link but a long name (`Iterator::A::B`), the parent is the node
 * whose long name is its prefix.
 */
import { cellAt, tableRows, type DataTable } from '../table/datatable';
import { columnIndex, findTable, property, rowObjects, stringAt } from './gviz';
import { hasMarkup, plainText } from './rich-text';

export const NODE_NORMAL = 0;
export const NODE_CRITICAL = 1;
export const NODE_BOTTLENECK = 2;

export interface PipelineNode {
  id: string;
  parent: string;
  name: string;
  longName: string;
  details: string[];
  type: number;
}

export interface PipelineGraph {
  key: string;
  host: string;
  pipeline: string;
  rank: number;
  nodes: PipelineNode[];
}

export interface TfDataModel {
  summary: string;
  inputBound: boolean;
  graphs: PipelineGraph[];
  stats: DataTable | undefined;
  bottlenecks: DataTable | undefined;
}

export function graphKey(host: string, pipeline: string, rank: number): string {
  return `${host} · ${pipeline} · #${rank}`;
}

/** Name and detail lines of a node cell: a text column if the payload has one, else `f` read as text. */
function nodeText(table: DataTable, rowIndex: number): { name: string; details: string[] } {
  const row = tableRows(table)[rowIndex];
  const labelIndex = ['label', 'node_name', 'iterator_name'].map((id) => columnIndex(table, id)).find((i) => i >= 0) ?? -1;
  if (labelIndex >= 0) return { name: stringAt(row, labelIndex), details: [] };
  const cell = cellAt(row, columnIndex(table, 'name'));
  const text = typeof cell?.f === 'string' ? plainText(cell.f) : String(cell?.v ?? '');
  const [name = '', ...details] = text.split('\n').map((line) => line.trim()).filter(Boolean);
  return { name, details };
}

export function pipelineGraphs(table: DataTable | undefined): PipelineGraph[] {
  if (!table) return [];
  const host = columnIndex(table, 'host');
  const pipeline = columnIndex(table, 'input_pipeline');
  const rank = columnIndex(table, 'rank');
  const id = columnIndex(table, 'name');
  const parent = columnIndex(table, 'parent');
  const type = columnIndex(table, 'type');
  const longName = columnIndex(table, 'long_name');
  const graphs = new Map<string, PipelineGraph>();
  tableRows(table).forEach((row, index) => {
    const h = stringAt(row, host);
    const p = stringAt(row, pipeline);
    const r = Number(stringAt(row, rank)) || 0;
    const key = graphKey(h, p, r);
    let graph = graphs.get(key);
    if (!graph) graphs.set(key, (graph = { key, host: h, pipeline: p, rank: r, nodes: [] }));
    const text = nodeText(table, index);
    graph.nodes.push({
      id: stringAt(row, id),
      parent: stringAt(row, parent),
      name: text.name || stringAt(row, id),
      longName: longName >= 0 ? stringAt(row, longName) : '',
      details: text.details,
      type: Number(stringAt(row, type)) || 0,
    });
  });
  for (const graph of graphs.values()) linkByLongName(graph.nodes);
  return [...graphs.values()];
}

/** Orphans get the node whose long name is their prefix as parent. */
export function linkByLongName(nodes: PipelineNode[]): void {
  const ids = new Set(nodes.map((n) => n.id));
  const byLongName = new Map(nodes.filter((n) => n.longName).map((n) => [n.longName, n]));
  for (const node of nodes) {
    if (node.parent && ids.has(node.parent)) continue;
    const prefix = node.longName.includes('::') ? node.longName.slice(0, node.longName.lastIndexOf('::')) : '';
    const parent = byLongName.get(prefix);
    node.parent = parent && parent !== node ? parent.id : '';
  }
}

/**
 * Orphans (no valid parent, not the top root) are attached by iterator path: in a long name
 * `Iterator::Root::Prefetch::MapAndBatch`, MapAndBatch's parent is the node named Prefetch.
 * Upstream's graph table sometimes loses that link; its bottleneck text keeps the long name.
 */
export function linkOrphansByPath(nodes: PipelineNode[], longNames: readonly string[]): void {
  const ids = new Set(nodes.map((n) => n.id));
  const orphans = nodes.filter((n) => !n.parent || !ids.has(n.parent));
  if (orphans.length < 2) return;
  for (const orphan of orphans) {
    for (const longName of longNames) {
      const parts = longName.split('::');
      const at = parts.lastIndexOf(orphan.name);
      if (at < 1) continue;
      const parentName = parts[at - 1];
      const parent = nodes.find((n) => n !== orphan && n.name === parentName && !isDescendant(nodes, n, orphan));
      if (parent) {
        orphan.parent = parent.id;
        break;
      }
    }
  }
}

function isDescendant(nodes: readonly PipelineNode[], node: PipelineNode, ancestor: PipelineNode): boolean {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  for (let at: PipelineNode | undefined = node, steps = 0; at && steps < nodes.length; at = byId.get(at.parent), steps++) {
    if (at === ancestor) return true;
  }
  return false;
}

/** Long iterator names mentioned in the bottleneck table (`Long Name: Iterator::…`). */
export function longNamesOf(table: DataTable | undefined): string[] {
  if (!table) return [];
  const names: string[] = [];
  for (const row of tableRows(table)) {
    for (const cell of row.c ?? []) {
      if (typeof cell?.v !== 'string') continue;
      for (const match of plainText(cell.v).matchAll(/Iterator(::[\w.-]+)+/g)) names.push(match[0]);
    }
  }
  return names;
}

/** Nodes built from long names alone (`Iterator::Root::Prefetch::Map`), e.g. an input-op table. */
export function graphFromLongNames(longNames: readonly string[], bottleneck = ''): PipelineNode[] {
  const nodes = new Map<string, PipelineNode>();
  for (const full of longNames) {
    const parts = full.split('::');
    for (let i = 1; i <= parts.length; i++) {
      const name = parts.slice(0, i).join('::');
      if (nodes.has(name)) continue;
      nodes.set(name, { id: name, parent: i > 1 ? parts.slice(0, i - 1).join('::') : '', name: parts[i - 1], longName: name, details: [], type: NODE_NORMAL });
    }
  }
  const mark = nodes.get(bottleneck);
  for (let node = mark; node; node = nodes.get(node.parent)) node.type = node === mark ? NODE_BOTTLENECK : NODE_CRITICAL;
  return [...nodes.values()];
}

/** A copy of the table with HTML-bearing string cells turned into plain text. */
export function textOnlyTable(table: DataTable): DataTable {
  return {
    ...table,
    rows: tableRows(table).map((row) => ({
      c: (row.c ?? []).map((cell) =>
        cell && typeof cell.v === 'string' && hasMarkup(cell.v) ? { v: plainText(cell.v) } : cell && { v: cell.v },
      ),
    })),
  };
}

/**
 * The converter's summary, except where it contradicts the page: its bottleneck analysis covers
 * host pipelines only, so a profile whose tf.data pipelines all run on devices gets "No tf.data
 * activity captured" above their statistics and graph (gpu_multi_worker); we say what was seen.
 */
function summaryOf(bottlenecks: DataTable | undefined, stats: DataTable | undefined): string {
  const message = property(bottlenecks, 'summary_message');
  const pipelines = stats ? rowObjects(stats) : [];
  if (!/^No tf\.data activity/.test(message) || pipelines.length === 0) return message;
  const calls = pipelines.reduce((sum, p) => sum + Number(p.num_calls ?? 0), 0);
  const slow = pipelines.reduce((sum, p) => sum + Number(p.num_slow_calls ?? 0), 0);
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  return (
    `tf.data activity was captured in ${plural(pipelines.length, 'device input pipeline')} ` +
    `(${plural(calls, 'call')}, ${slow} slower than 50 us), but in no host input pipeline. ` +
    'The bottleneck analysis covers host input pipelines only; the graph below shows where the ' +
    'device pipelines spend their time.'
  );
}

export function tfDataModel(payload: unknown): TfDataModel {
  const graph = findTable(payload, ['name', 'parent', 'type']);
  const stats = findTable(payload, ['num_calls', 'num_slow_calls']);
  const bottlenecks = findTable(payload, ['bottleneck', 'suggestion']);
  const graphs = pipelineGraphs(graph);
  const longNames = longNamesOf(bottlenecks);
  for (const g of graphs) linkOrphansByPath(g.nodes, longNames);
  if (graphs.length === 0 && longNames.length) {
    // No graph table: the path to each bottleneck, rebuilt from its long name.
    graphs.push({ key: 'bottleneck path', host: '', pipeline: '', rank: 0, nodes: graphFromLongNames(longNames, longNames[0]) });
  }
  return {
    summary: summaryOf(bottlenecks, stats),
    inputBound: property(bottlenecks, 'is_input_bound') === 'true',
    graphs,
    stats,
    bottlenecks,
  };
}

export interface LaidOutNode extends PipelineNode {
  x: number;
  y: number;
  depth: number;
}

export interface Layout {
  nodes: LaidOutNode[];
  edges: { from: LaidOutNode; to: LaidOutNode; critical: boolean }[];
  width: number;
  height: number;
}

/**
 * A top-down tree layout: depth gives the row, leaves take consecutive columns in depth-first
 * order and a parent sits above the middle of its children. Several roots make a forest.
 */
export function layoutTree(nodes: readonly PipelineNode[], nodeWidth = 180, nodeHeight = 64, gapX = 24, gapY = 40): Layout {
  const ids = new Set(nodes.map((n) => n.id));
  const children = new Map<string, PipelineNode[]>();
  for (const node of nodes) {
    const parent = node.parent && ids.has(node.parent) && node.parent !== node.id ? node.parent : '';
    const list = children.get(parent) ?? [];
    list.push(node);
    children.set(parent, list);
  }
  const placed: LaidOutNode[] = [];
  const byId = new Map<string, LaidOutNode>();
  let column = 0;
  let maxDepth = 0;
  const seen = new Set<string>();
  const place = (node: PipelineNode, depth: number): number => {
    seen.add(node.id);
    maxDepth = Math.max(maxDepth, depth);
    const kids = (children.get(node.id) ?? []).filter((k) => !seen.has(k.id));
    let x: number;
    if (kids.length === 0) x = column++;
    else {
      const xs = kids.map((k) => place(k, depth + 1));
      x = (xs[0] + xs[xs.length - 1]) / 2;
    }
    const laid = { ...node, depth, x, y: depth };
    placed.push(laid);
    byId.set(node.id, laid);
    return x;
  };
  for (const root of children.get('') ?? []) place(root, 0);
  for (const node of nodes) if (!seen.has(node.id)) place(node, 0);
  for (const node of placed) {
    node.x = gapX / 2 + node.x * (nodeWidth + gapX);
    node.y = gapY / 2 + node.y * (nodeHeight + gapY);
  }
  const edges = placed
    .filter((n) => n.parent && byId.has(n.parent) && n.parent !== n.id)
    .map((n) => {
      const from = byId.get(n.parent)!;
      return { from, to: n, critical: from.type !== NODE_NORMAL && n.type !== NODE_NORMAL };
    });
  return {
    nodes: placed,
    edges,
    width: Math.max(1, column) * (nodeWidth + gapX),
    height: (maxDepth + 1) * (nodeHeight + gapY),
  };
}
