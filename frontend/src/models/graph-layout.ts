/**
 * A layered layout of a small directed graph for SVG: operands above their users. Each node's
 * layer is its longest path from a source (cycles, which HLO has none of, are cut); nodes in a
 * layer keep their input order, centred. Expanded fusions are boxes sized by their own layout.
 */
export interface LayoutNode {
  id: string;
  width: number;
  height: number;
}

export interface PlacedNode extends LayoutNode {
  x: number;
  y: number;
  layer: number;
}

export interface Layout {
  nodes: PlacedNode[];
  width: number;
  height: number;
}

export const GAP_X = 24;
export const GAP_Y = 48;

export function layers(ids: readonly string[], edges: readonly { from: string; to: string }[]): Map<string, number> {
  const known = new Set(ids);
  const incoming = new Map<string, string[]>(ids.map((id) => [id, []]));
  for (const e of edges) if (known.has(e.from) && known.has(e.to) && e.from !== e.to) incoming.get(e.to)!.push(e.from);
  const layer = new Map<string, number>();
  const visiting = new Set<string>();
  const visit = (id: string): number => {
    const done = layer.get(id);
    if (done !== undefined) return done;
    if (visiting.has(id)) return 0; // a cycle: cut it here
    visiting.add(id);
    const value = Math.max(-1, ...incoming.get(id)!.map(visit)) + 1;
    visiting.delete(id);
    layer.set(id, value);
    return value;
  };
  ids.forEach(visit);
  return layer;
}

export function layout(nodes: readonly LayoutNode[], edges: readonly { from: string; to: string }[]): Layout {
  const layerOf = layers(
    nodes.map((n) => n.id),
    edges,
  );
  const rows: LayoutNode[][] = [];
  for (const n of nodes) (rows[layerOf.get(n.id) ?? 0] ??= []).push(n);
  const rowWidths = rows.map((row) => (row ?? []).reduce((w, n) => w + n.width, 0) + GAP_X * Math.max((row ?? []).length - 1, 0));
  const width = Math.max(0, ...rowWidths);
  const placed: PlacedNode[] = [];
  let y = 0;
  rows.forEach((row = [], layer) => {
    let x = (width - rowWidths[layer]) / 2;
    const height = Math.max(0, ...row.map((n) => n.height));
    for (const n of row) {
      placed.push({ ...n, x, y: y + (height - n.height) / 2, layer });
      x += n.width + GAP_X;
    }
    y += height + GAP_Y;
  });
  return { nodes: placed, width, height: Math.max(0, y - GAP_Y) };
}
