/**
 * The tf.data bottleneck analysis dashboard: summary, the per-pipeline bottleneck and
 * suggestion, the input-pipeline graph (critical path in bold, bottleneck outlined in red; one
 * graph per pipeline and slow call, chosen by a selector kept in the URL as `pipeline`), and the
 * all-pipelines statistics table. The graph is plain SVG with text bindings.
 */
import { LitElement, css, html, nothing, svg } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import '../components/data-table';
import { dashboardStyles, richText } from '../components/dashboard-parts';
import { controlStyles } from '../components/shared-styles';
import { clipLabel } from '../charts/options';
import { rowObjects, tableIndex } from '../models/gviz';
import {
  layoutTree,
  NODE_BOTTLENECK,
  NODE_NORMAL,
  textOnlyTable,
  tfDataModel,
  type PipelineGraph,
  type TfDataModel,
} from '../models/tf-data';
import { plainText } from '../models/rich-text';
import { readViewParam, writeViewParam } from '../view-params';
import type { ToolContext, ToolViewElement } from './contract';

export const TF_DATA_VIEW_TAG = 'pf-tf-data-view';

const NODE_W = 180;
const NODE_H = 64;

@customElement(TF_DATA_VIEW_TAG)
export class TfDataView extends LitElement implements ToolViewElement {
  @property({ attribute: false }) context!: ToolContext;
  @property({ attribute: false }) data: unknown;
  @state() private graphKey = readViewParam('pipeline');
  private model: TfDataModel | null = null;

  static override styles = [
    controlStyles,
    dashboardStyles,
    css`
      .graph {
        overflow: auto;
        max-height: 70vh;
      }
      svg.tree text {
        fill: var(--pf-text);
        font-size: 11px;
      }
      svg.tree text.name {
        font-size: 12px;
      }
      svg.tree text.critical {
        font-weight: 700;
      }
      svg.tree rect {
        fill: var(--pf-bg);
        stroke: var(--pf-border);
        stroke-width: 1;
      }
      svg.tree rect.critical {
        stroke: var(--pf-text);
        stroke-width: 2.5;
      }
      svg.tree rect.bottleneck {
        stroke: #e03131;
        stroke-width: 3;
      }
      svg.tree path {
        fill: none;
        stroke: var(--pf-muted);
        stroke-width: 1;
      }
      svg.tree path.critical {
        stroke: var(--pf-text);
        stroke-width: 2.5;
      }
      .legend {
        display: flex;
        gap: 16px;
        font-size: 0.85rem;
        color: var(--pf-muted);
      }
      .legend .bold {
        font-weight: 700;
        color: var(--pf-text);
      }
      .legend .red {
        color: #e03131;
      }
    `,
  ];

  override willUpdate(changed: Map<PropertyKey, unknown>): void {
    if (changed.has('data')) this.model = tfDataModel(this.data);
    const graphs = this.model?.graphs ?? [];
    if (graphs.length && !graphs.some((g) => g.key === this.graphKey)) this.graphKey = graphs[0].key;
  }

  override render() {
    const m = this.model;
    if (!m) return nothing;
    const { api, run, tool, host } = this.context;
    const graph = m.graphs.find((g) => g.key === this.graphKey);
    const bottlenecks = m.bottlenecks ? rowObjects(m.bottlenecks) : [];
    return html`
      <section class="card wide summary" aria-label="Summary">
        <h2>Summary</h2>
        <p class="statement ${m.inputBound ? 'verdict' : ''}">${m.summary || 'No summary.'}</p>
        ${bottlenecks.length
          ? html`<ul class="tips">
              ${bottlenecks.map(
                (b) => html`<li>
                  <strong>${String(b.host ?? '')} ${String(b.input_pipeline ?? '')}</strong> (max latency ${String(b.max_latency ?? '')} us):
                  ${plainText(String(b.bottleneck ?? '')).replace(/\n/g, ' · ')}. ${richText(String(b.suggestion ?? ''))}
                </li>`,
              )}
            </ul>`
          : nothing}
      </section>
      <section class="card wide" aria-label="Input pipeline graph">
        <h2>Input pipeline graph</h2>
        ${m.graphs.length
          ? html`<div class="toolbar">
                <label
                  >Pipeline and slow call (0 = slowest)
                  <select @change=${this.onGraph} name="pipeline">
                    ${m.graphs.map((g) => html`<option .value=${g.key} ?selected=${g.key === this.graphKey}>${g.key}</option>`)}
                  </select>
                </label>
                <span class="legend"><span class="bold">Bold: critical path</span><span class="red">Red outline: bottleneck</span></span>
              </div>
              ${graph ? this.renderGraph(graph) : nothing}`
          : html`<p class="muted">No tf.data iterator activity was captured.</p>`}
      </section>
      ${m.stats
        ? html`<section class="card wide" aria-label="All input pipelines">
            <h2>All input pipelines</h2>
            <pf-data-table .table=${m.stats} caption="All input pipelines" csv-href=${api.csvUrl(run, tool, host, tableIndex(this.data, m.stats))}></pf-data-table>
          </section>`
        : nothing}
      ${m.bottlenecks && m.bottlenecks.rows?.length
        ? html`<section class="card wide" aria-label="Bottlenecks">
            <h2>Bottleneck per slow pipeline</h2>
            <pf-data-table
              .table=${textOnlyTable(m.bottlenecks)}
              caption="Bottlenecks"
              csv-href=${api.csvUrl(run, tool, host, tableIndex(this.data, m.bottlenecks))}
            ></pf-data-table>
          </section>`
        : nothing}
    `;
  }

  private renderGraph(graph: PipelineGraph) {
    const layout = layoutTree(graph.nodes, NODE_W, NODE_H);
    const cls = (type: number) => (type === NODE_BOTTLENECK ? 'bottleneck critical' : type !== NODE_NORMAL ? 'critical' : '');
    return html`<div class="graph">
      <svg class="tree" width=${layout.width} height=${layout.height} role="img" aria-label="Iterator graph of ${graph.key}">
        ${layout.edges.map(
          (e) =>
            svg`<path class=${e.critical ? 'critical' : ''} d=${`M${e.from.x + NODE_W / 2},${e.from.y + NODE_H} C${e.from.x + NODE_W / 2},${e.to.y - 16} ${e.to.x + NODE_W / 2},${e.from.y + NODE_H + 16} ${e.to.x + NODE_W / 2},${e.to.y}`}></path>`,
        )}
        ${layout.nodes.map(
          (n) => svg`<g class="node" transform=${`translate(${n.x},${n.y})`}>
            <title>${[n.longName || n.name, ...n.details].join('\n')}</title>
            <rect class=${cls(n.type)} width=${NODE_W} height=${NODE_H} rx="6"></rect>
            <text class="name ${n.type !== NODE_NORMAL ? 'critical' : ''}" x="8" y="18">${clipLabel(n.name, 24)}</text>
            ${n.details
              .filter((d) => !/^Start Time/i.test(d))
              .slice(0, 3)
              .map((d, i) => svg`<text x="8" y=${34 + i * 13}>${clipLabel(d, 28)}</text>`)}
          </g>`,
        )}
      </svg>
    </div>`;
  }

  private onGraph(event: Event): void {
    this.graphKey = (event.target as HTMLSelectElement).value;
    writeViewParam('pipeline', this.graphKey);
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'pf-tf-data-view': TfDataView;
  }
}
