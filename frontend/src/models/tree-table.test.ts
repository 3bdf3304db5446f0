import { describe, expect, it } from 'vitest';
import { ancestors, formatBytes, initiallyOpen, isTreeTable, parseTree, visibleNodes } from './tree-table';

const COLS = ['name', 'kind', 'total_time_us', 'self_time_us', 'device_time_us', 'host_time_us', 'total_time_percent', 'occurrences', 'ops', 'bytes', 'id', 'parent', 'depth', 'path'];

function table(rows: (string | number)[][]) {
  return {
    cols: COLS.map((id) => ({ id, label: id, type: 'string' })),
    rows: rows.map((r) => ({ c: r.map((v) => ({ v })) })),
    p: { tree: 'true', view: 'scope_view', bytes_recorded: 'false' },
  };
}

// (all) → model → encoder → {dense, attention}; model → head (a leaf op)
const TREE = table([
  ['(all)', 'root', 100, 0, 60, 40, 100, 9, 3, 0, 0, -1, 0, ''],
  ['model', 'scope', 100, 0, 60, 40, 100, 9, 3, 0, 1, 0, 1, 'model'],
  ['encoder', 'scope', 70, 0, 60, 10, 70, 6, 2, 0, 2, 1, 2, 'model / encoder'],
  ['dense', 'op', 50, 50, 50, 0, 50, 3, 1, 0, 3, 2, 3, 'model / encoder / dense'],
  ['attention', 'op', 20, 20, 10, 10, 20, 3, 1, 0, 4, 2, 3, 'model / encoder / attention'],
  ['head', 'op', 30, 30, 0, 30, 30, 3, 1, 0, 5, 1, 2, 'model / head'],
]);

describe('tree tables', () => {
  const tree = parseTree(TREE)!;

  it('recognises and parses the tree payload', () => {
    expect(isTreeTable(TREE)).toBe(true);
    expect(isTreeTable({ cols: [], rows: [] })).toBe(false);
    expect(tree.nodes).toHaveLength(6);
    expect(tree.byId.get(2)).toMatchObject({ name: 'encoder', totalUs: 70, hasChildren: true, depth: 2 });
    expect(tree.byId.get(3)!.hasChildren).toBe(false);
  });

  it('opens the root and single-child chains, and shows children of open nodes only', () => {
    const open = initiallyOpen(tree);
    expect([...open].sort()).toEqual([0, 1]); // model is the root's only child; encoder has two
    expect(visibleNodes(tree, open).map((n) => n.name)).toEqual(['(all)', 'model', 'encoder', 'head']);
    open.add(2);
    expect(visibleNodes(tree, open).map((n) => n.name)).toEqual(['(all)', 'model', 'encoder', 'dense', 'attention', 'head']);
  });

  it('filters to matches with their ancestors and subtrees, in tree order', () => {
    expect(visibleNodes(tree, new Set([0]), 'ATTEN').map((n) => n.name)).toEqual(['(all)', 'model', 'encoder', 'attention']);
    expect(visibleNodes(tree, new Set([0]), 'encod').map((n) => n.name)).toEqual(['(all)', 'model', 'encoder', 'dense', 'attention']);
    expect(visibleNodes(tree, new Set([0]), 'nothing')).toEqual([]);
    expect(ancestors(tree, 4)).toEqual([2, 1, 0]);
  });

  it('formats bytes', () => {
    expect(formatBytes(0)).toBe('');
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(4194304)).toBe('4.0 MiB');
  });
});
