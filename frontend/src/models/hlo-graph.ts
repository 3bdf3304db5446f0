/**
 * The graph viewer's drawing model: node boxes (fusions expanded in place), their positions from
 * the layered layout, and edge paths. Pure, so the geometry is tested without a browser.
 */
import { layout, type PlacedNode } from './graph-layout';
import type { GraphEdge, GraphNode, GraphPayload } from './xla';

export const CHAR_PX = 7;
export const NODE_H = 40;
const INNER_H = 26;
const PAD = 12;
const HEADER = 22;

export interface DrawnNode {
  node: GraphNode;
  x: number;
  y: number;
  width: number;
  height: number;
  center: boolean;
  inner: { name: string; opcode: string; x: number; y: number; width: number; height: number }[];
  innerEdges: { d: string }[];
}

export interface Drawing {
  nodes: DrawnNode[];
  edges: { from: string; to: string; d: string }[];
  width: number;
  height: number;
}

const nodeWidth = (n: GraphNode) => Math.max(96, CHAR_PX * Math.max(n.name.length, `${n.opcode} ${n.shape}`.length) + 16);

/** A path from the bottom of `a` to the top of `b`. */
export function edgePath(a: { x: number; y: number; width: number; height: number }, b: { x: number; y: number; width: number }): string {
  const x1 = a.x + a.width / 2;
  const y1 = a.y + a.height;
  const x2 = b.x + b.width / 2;
  const y2 = b.y;
  const mid = (y1 + y2) / 2;
  return `M${x1},${y1} C${x1},${mid} ${x2},${mid} ${x2},${y2}`;
}

function fusedLayout(node: GraphNode) {
  const nodes = node.fusion?.nodes ?? [];
  const edges: GraphEdge[] = node.fusion?.edges ?? [];
  return layout(
    nodes.map((n) => ({ id: n.name, width: Math.max(64, CHAR_PX * Math.max(n.name.length, n.opcode.length) + 12), height: INNER_H })),
    edges,
  );
}

export function drawing(graph: GraphPayload, expanded: ReadonlySet<string>): Drawing {
  const inner = new Map(graph.nodes.filter((n) => expanded.has(n.name) && n.fusion?.nodes).map((n) => [n.name, fusedLayout(n)]));
  const boxes = graph.nodes.map((n) => {
    const sub = inner.get(n.name);
    return {
      id: n.name,
      width: sub ? Math.max(nodeWidth(n), sub.width + 2 * PAD) : nodeWidth(n),
      height: sub ? sub.height + 2 * PAD + HEADER : NODE_H,
    };
  });
  const placed = layout(boxes, graph.edges);
  const at = new Map<string, PlacedNode>(placed.nodes.map((p) => [p.id, p]));
  const nodes = graph.nodes.map((n) => {
    const p = at.get(n.name)!;
    const sub = inner.get(n.name);
    const ox = p.x + PAD;
    const oy = p.y + HEADER + PAD;
    const innerNodes = (sub?.nodes ?? []).map((q) => ({
      name: q.id,
      opcode: n.fusion?.nodes?.find((f) => f.name === q.id)?.opcode ?? '',
      x: ox + q.x,
      y: oy + q.y,
      width: q.width,
      height: q.height,
    }));
    const innerAt = new Map(innerNodes.map((q) => [q.name, q]));
    const innerEdges = (n.fusion?.edges ?? [])
      .filter((e) => innerAt.has(e.from) && innerAt.has(e.to))
      .map((e) => ({ d: edgePath(innerAt.get(e.from)!, innerAt.get(e.to)!) }));
    return { node: n, x: p.x, y: p.y, width: p.width, height: p.height, center: n.name === graph.center, inner: innerNodes, innerEdges };
  });
  const edges = graph.edges
    .filter((e) => at.has(e.from) && at.has(e.to))
    .map((e) => ({ ...e, d: edgePath(at.get(e.from)!, at.get(e.to)!) }));
  return { nodes, edges, width: placed.width, height: placed.height };
}
