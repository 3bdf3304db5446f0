/**
 * graph_viewer: one program's HLO. Module selector; search an op (suggestions from `type=ops`),
 * choose the depth, and the graph around it is drawn as SVG (operands above users; click a node
 * to centre on it; fusions expand in place). The HLO text tab shows the module as XLA prints it.
 * Module and op live in the URL (`module_name`, `node_name`), so other tools link here.
 */
import { LitElement, css, html, nothing, svg } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import '../components/message-card';
import { dashboardStyles } from '../components/dashboard-parts';
import { controlStyles } from '../components/shared-styles';
import { drawing, type DrawnNode } from '../models/hlo-graph';
import { isGraph, type GraphPayload } from '../models/xla';
import type { ToolContext, ToolViewElement } from './contract';
import { defaultModule, MODULE_PARAM, moduleList, moduleSelect, OP_PARAM, setUrlParams, urlParam } from './xla-parts';

export const GRAPH_VIEWER_VIEW_TAG = 'pf-graph-viewer-view';

interface OpEntry {
  name: string;
  opcode: string;
}

/** The op the server opens a module on, and why (`type=ops`'s `start`). */
interface StartOp {
  name: string;
  reason: string;
}

@customElement(GRAPH_VIEWER_VIEW_TAG)
export class GraphViewerView extends LitElement implements ToolViewElement {
  @property({ attribute: false }) context!: ToolContext;
  @state() private modules: string[] = [];
  @state() private module = '';
  @state() private ops: OpEntry[] = [];
  @state() private op = '';
  @state() private start: StartOp | null = null;
  @state() private depth = 2;
  @state() private graph: GraphPayload | null = null;
  @state() private expanded = new Set<string>();
  @state() private tab: 'graph' | 'text' = 'graph';
  @state() private text = '';
  @state() private error = '';

  static override styles = [
    controlStyles,
    dashboardStyles,
    css`
      .canvas {
        overflow: auto;
        max-height: 75vh;
        border: 1px solid var(--pf-border);
        border-radius: 6px;
        background: var(--pf-bg);
        color: var(--pf-muted);
      }
      svg text {
        font: 12px system-ui, sans-serif;
        fill: var(--pf-text);
      }
      .node rect.box,
      .node g rect {
        fill: var(--pf-surface);
        stroke: var(--pf-border);
      }
      .node rect.toggle {
        fill: transparent;
        stroke: none;
      }
      .node.center rect.box {
        stroke: #d33;
        stroke-width: 2;
      }
      .node.fusion rect.box {
        fill: color-mix(in srgb, var(--pf-surface) 85%, #4a7bd0);
      }
      .node:hover rect.box {
        stroke: var(--pf-accent);
      }
      .node {
        cursor: pointer;
      }
      .node text.sub {
        fill: var(--pf-muted);
      }
      path.edge {
        fill: none;
        stroke: var(--pf-muted);
        marker-end: url(#arrow);
      }
      pre.hlo {
        font-family: var(--pf-mono);
        overflow: auto;
        max-height: 75vh;
        font-size: 12px;
      }
      .tabs button[aria-selected='true'] {
        font-weight: 600;
      }
    `,
  ];

  override willUpdate(changed: Map<PropertyKey, unknown>): void {
    if (changed.has('context')) void this.loadModules();
  }

  private params(extra: Record<string, string | number>) {
    const { run, tool, host } = this.context;
    return { run, tag: tool, host: host || undefined, module_name: this.module, ...extra };
  }

  private async loadModules(): Promise<void> {
    try {
      this.modules = await moduleList(this.context.api, this.context.run);
      await this.selectModule(defaultModule(this.modules, urlParam(MODULE_PARAM)), urlParam(OP_PARAM));
    } catch (error) {
      this.error = (error as Error).message;
    }
  }

  private async selectModule(module: string, op = ''): Promise<void> {
    this.module = module;
    this.graph = null;
    this.text = '';
    this.error = '';
    const reply = await this.context.api.getJson<{ ops: OpEntry[]; start?: StartOp }>('data', this.params({ type: 'ops' }));
    this.ops = reply.ops ?? [];
    this.start = reply.start?.name ? reply.start : null;
    const names = new Set(this.ops.map((o) => o.name));
    await this.draw(names.has(op) ? op : (this.start?.name ?? this.ops[0]?.name ?? ''));
    if (this.tab === 'text') await this.loadText();
  }

  private async draw(op: string): Promise<void> {
    this.op = op;
    setUrlParams({ [MODULE_PARAM]: this.module, [OP_PARAM]: op });
    if (!op) return;
    try {
      const data = await this.context.api.getJson<unknown>('data', this.params({ type: 'graph', node_name: op, graph_width: this.depth }));
      this.graph = isGraph(data) ? data : null;
      this.expanded = new Set();
      this.error = '';
    } catch (error) {
      this.error = (error as Error).message;
    }
  }

  private async loadText(): Promise<void> {
    if (!this.text) this.text = await this.context.api.getText('data', this.params({ type: 'short_txt' }));
  }

  override render() {
    return html`
      <div class="toolbar">
        ${moduleSelect(this.modules, this.module, (m) => void this.selectModule(m))}
        <label
          >Op
          <input name="op" type="search" list="hlo-ops" .value=${this.op} placeholder="op name" @change=${this.onOp} />
          <datalist id="hlo-ops">${this.ops.map((o) => html`<option .value=${o.name}>${o.opcode}</option>`)}</datalist>
        </label>
        <label
          >Depth
          <input name="depth" type="number" min="0" max="10" .value=${String(this.depth)} @change=${this.onDepth} />
        </label>
        <span class="tabs" role="tablist">
          <button type="button" role="tab" aria-selected=${this.tab === 'graph'} @click=${() => (this.tab = 'graph')}>Graph</button>
          <button type="button" role="tab" aria-selected=${this.tab === 'text'} @click=${this.showText}>HLO text</button>
        </span>
      </div>
      ${this.error ? html`<pf-message kind="error" heading="Graph viewer" .message=${this.error}></pf-message>` : nothing}
      ${this.tab === 'text'
        ? html`<section class="card wide" aria-label="HLO text"><pre class="hlo">${this.text || 'Loading…'}</pre></section>`
        : this.renderGraph()}
    `;
  }

  private renderGraph() {
    const g = this.graph;
    if (!g) return nothing;
    const d = drawing(g, this.expanded);
    const margin = 16;
    return html`<section class="card wide" aria-label="HLO graph">
      <h2>${g.center} <span class="muted">in ${g.computation}, ${g.nodes.length} ops within ${g.depth} steps</span></h2>
      ${this.startNote(g.center)}
      ${g.truncated ? html`<p class="muted">The neighbourhood is large: only the nearest ops are drawn.</p>` : nothing}
      <p class="muted">Click an op to centre on it; click a fusion's ▸ to expand it.</p>
      <div class="canvas">
        <svg width=${d.width + 2 * margin} height=${d.height + 2 * margin} role="img" aria-label=${`Graph around ${g.center}`}>
          <defs>
            <marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
              <path d="M 0 0 L 10 5 L 0 10 z" fill="currentColor"></path>
            </marker>
          </defs>
          <g transform=${`translate(${margin},${margin})`}>
            ${d.edges.map((e) => svg`<path class="edge" d=${e.d}><title>${e.from} → ${e.to}</title></path>`)}
            ${d.nodes.map((n) => this.renderNode(n))}
          </g>
        </svg>
      </div>
    </section>`;
  }

  /** Says why the graph opened on this op, while it is the server's start op. */
  private startNote(center: string) {
    const start = this.start;
    if (!start || start.name !== center) return nothing;
    return html`<p class="muted start-note">Opened on ${start.name}: ${start.reason}. Search an op above to move.</p>`;
  }

  private renderNode(n: DrawnNode) {
    const fusion = !!n.node.fusion;
    const open = this.expanded.has(n.node.name);
    const classes = `node ${n.center ? 'center' : ''} ${fusion ? 'fusion' : ''}`;
    return svg`<g class=${classes} data-op=${n.node.name} @click=${() => void this.draw(n.node.name)}>
      <title>${n.node.name} = ${n.node.shape} ${n.node.opcode}${n.node.tfOp ? `\n${n.node.tfOp}` : ''}</title>
      <rect class="box" x=${n.x} y=${n.y} width=${n.width} height=${n.height} rx="5"></rect>
      <text x=${n.x + 8} y=${n.y + 16}>${fusion ? (open ? '▾ ' : '▸ ') : ''}${n.node.name}</text>
      ${open ? nothing : svg`<text class="sub" x=${n.x + 8} y=${n.y + 32}>${n.node.opcode} ${n.node.shape}</text>`}
      ${fusion ? svg`<rect class="toggle" x=${n.x} y=${n.y} width="20" height="22" @click=${(e: Event) => this.toggle(e, n.node.name)}></rect>` : nothing}
      ${n.innerEdges.map((e) => svg`<path class="edge" d=${e.d}></path>`)}
      ${n.inner.map(
        (q) => svg`<g class="inner"><rect x=${q.x} y=${q.y} width=${q.width} height=${q.height} rx="3"></rect>
          <text x=${q.x + 6} y=${q.y + 17}>${q.name}</text><title>${q.opcode}</title></g>`,
      )}
    </g>`;
  }

  private toggle(event: Event, name: string): void {
    event.stopPropagation();
    const next = new Set(this.expanded);
    if (next.has(name)) next.delete(name);
    else next.add(name);
    this.expanded = next;
  }

  private onOp(event: Event): void {
    void this.draw((event.target as HTMLInputElement).value.trim());
  }

  private onDepth(event: Event): void {
    const value = Number((event.target as HTMLInputElement).value);
    this.depth = Number.isFinite(value) ? Math.min(10, Math.max(0, Math.round(value))) : 2;
    void this.draw(this.op);
  }

  private async showText(): Promise<void> {
    this.tab = 'text';
    await this.loadText();
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'pf-graph-viewer-view': GraphViewerView;
  }
}
