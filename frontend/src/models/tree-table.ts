/**
 * The drill-down tree of op_types / scope_view / code_view: a DataTable whose rows come
 * depth-first with `id`, `parent` and `depth` columns (see tools/tree_table.py). This module
 * turns it into nodes and decides which rows are visible for the open nodes and a filter.
 *
 *   const tree = parseTree(payload)!;
 *   const open = initiallyOpen(tree);
 *   visibleNodes(tree, open, 'conv')   // matches, their ancestors and subtrees, in tree order
 */
import { isDataTable, type DataTable } from '../table/datatable';

export interface TreeNode {
  id: number;
  parent: number;
  depth: number;
  name: string;
  kind: string;
  path: string;
  totalUs: number;
  selfUs: number;
  deviceUs: number;
  hostUs: number;
  percent: number;
  occurrences: number;
  ops: number;
  bytes: number;
  hasChildren: boolean;
}

export interface Tree {
  nodes: TreeNode[];
  byId: Map<number, TreeNode>;
  view: string;
  bytesRecorded: boolean;
}

const NUMBER_FIELDS: [keyof TreeNode, string][] = [
  ['id', 'id'],
  ['parent', 'parent'],
  ['depth', 'depth'],
  ['totalUs', 'total_time_us'],
  ['selfUs', 'self_time_us'],
  ['deviceUs', 'device_time_us'],
  ['hostUs', 'host_time_us'],
  ['percent', 'total_time_percent'],
  ['occurrences', 'occurrences'],
  ['ops', 'ops'],
  ['bytes', 'bytes'],
];

export function isTreeTable(payload: unknown): boolean {
  return isDataTable(payload) && (payload as DataTable).p?.tree === 'true';
}

export function parseTree(payload: unknown): Tree | null {
  if (!isTreeTable(payload)) return null;
  const table = payload as DataTable;
  const index = new Map(table.cols.map((c, i) => [c.id ?? '', i]));
  const value = (row: DataTable['rows'][number], id: string) => row.c[index.get(id) ?? -1]?.v;
  const nodes: TreeNode[] = table.rows.map((row) => {
    const node = {
      name: String(value(row, 'name') ?? ''),
      kind: String(value(row, 'kind') ?? ''),
      path: String(value(row, 'path') ?? ''),
      hasChildren: false,
    } as TreeNode;
    for (const [field, id] of NUMBER_FIELDS) (node as unknown as Record<string, number>)[field] = Number(value(row, id) ?? 0);
    return node;
  });
  const byId = new Map(nodes.map((n) => [n.id, n]));
  for (const node of nodes) {
    const parent = byId.get(node.parent);
    if (parent) parent.hasChildren = true;
  }
  return { nodes, byId, view: String(table.p?.view ?? ''), bytesRecorded: table.p?.bytes_recorded === 'true' };
}

/** The root, plus every only child of an open node (a chain with nothing to choose in it). */
export function initiallyOpen(tree: Tree): Set<number> {
  const open = new Set<number>();
  const children = childCounts(tree);
  for (const node of tree.nodes) {
    const onlyChild = open.has(node.parent) && children.get(node.parent) === 1;
    if (node.depth === 0 || (onlyChild && node.hasChildren)) open.add(node.id);
  }
  return open;
}

function childCounts(tree: Tree): Map<number, number> {
  const counts = new Map<number, number>();
  for (const node of tree.nodes) counts.set(node.parent, (counts.get(node.parent) ?? 0) + 1);
  return counts;
}

/** Rows to show: every node whose ancestors are open; with a filter, matches with their ancestors and subtrees. */
export function visibleNodes(tree: Tree, open: ReadonlySet<number>, filter = ''): TreeNode[] {
  const needle = filter.trim().toLowerCase();
  if (needle) {
    const keep = new Set<number>();
    const under = new Set<number>(); // inside a matching node's subtree (nodes come depth-first)
    for (const node of tree.nodes) {
      const matches = node.name.toLowerCase().includes(needle);
      if (matches || under.has(node.parent)) under.add(node.id);
      if (!matches) continue;
      for (let n: TreeNode | undefined = node; n && !keep.has(n.id); n = tree.byId.get(n.parent)) keep.add(n.id);
    }
    return tree.nodes.filter((n) => keep.has(n.id) || under.has(n.id));
  }
  const shown = new Set<number>();
  const out: TreeNode[] = [];
  for (const node of tree.nodes) {
    const parentShown = node.parent < 0 || (shown.has(node.parent) && open.has(node.parent));
    if (!parentShown) continue;
    shown.add(node.id);
    out.push(node);
  }
  return out;
}

/** Every ancestor of `id` (to reveal a node). */
export function ancestors(tree: Tree, id: number): number[] {
  const out: number[] = [];
  for (let n = tree.byId.get(tree.byId.get(id)?.parent ?? -1); n; n = tree.byId.get(n.parent)) out.push(n.id);
  return out;
}

export function formatBytes(bytes: number): string {
  if (!bytes) return '';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(unit ? 1 : 0)} ${units[unit]}`;
}
