/**
 * The Overview dashboard (overview_page): performance summary, step-time graph, top-10
 * operations (from framework_op_stats, fetched after first paint), run environment,
 * recommendation with links to the tools it names, and diagnostics.
 */
import { LitElement, html, nothing } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import '../charts/echart';
import { stackedBarOption } from '../charts/options';
import '../components/data-table';
import {
  breakdownTable,
  dashboardStyles,
  diagnosticsCard,
  metricList,
  richText,
  toolLink,
} from '../components/dashboard-parts';
import { controlStyles } from '../components/shared-styles';
import { groupTips, overviewModel, type OverviewModel, type Tip } from '../models/overview';
import type { AdvisorReport } from '../models/advisor';
import { adviceProblems, findingStyles, loadAdvice } from './advisor-view';
import { opStatsTables, topOps, topOpsTable } from '../models/op-stats';
import type { DataTable } from '../table/datatable';
import { runToolFor } from '../tools';
import type { ToolContext, ToolViewElement } from './contract';

export const OVERVIEW_VIEW_TAG = 'pf-overview-view';
/** Where a profile without TensorFlow ops has its ops (the top-10 card links those listed). */
const XLA_OP_TOOLS = ['hlo_stats', 'op_profile'];

@customElement(OVERVIEW_VIEW_TAG)
export class OverviewView extends LitElement implements ToolViewElement {
  @property({ attribute: false }) context!: ToolContext;
  @property({ attribute: false }) data: unknown;
  @state() private topOps: DataTable | null = null;
  @state() private topOpsNote = '';
  @state() private noFrameworkOps = false;
  @state() private advice: AdvisorReport | null = null;
  private model: OverviewModel | null = null;

  static override styles = [controlStyles, dashboardStyles, findingStyles];

  override willUpdate(changed: Map<PropertyKey, unknown>): void {
    if (changed.has('data') || changed.has('context')) {
      this.model = overviewModel(this.data, this.context?.tools ?? []);
    }
  }

  override firstUpdated(): void {
    performance.mark?.('pf-overview-rendered');
    void this.loadTopOps();
    void loadAdvice(this.context).then((report) => (this.advice = report));
  }

  override render() {
    const m = this.model;
    if (!m) return nothing;
    return html`
      ${diagnosticsCard(m.diagnostics)}
      <div class="grid">
        <section class="card summary" aria-label="Performance summary">
          <h2>Performance summary</h2>
          ${m.summary.length ? metricList(m.summary) : html`<p class="muted">No step time was measured.</p>`}
          ${m.stepTime?.components.length
            ? html`<h3>Average step time breakdown</h3>
                ${breakdownTable(m.stepTime.components)}`
            : nothing}
        </section>
        <section class="card recommendation" aria-label="Recommendation for next step">
          <h2>Recommendation for next step</h2>
          ${m.statement ? html`<p class="statement verdict">${richText(m.statement)}</p>` : nothing}
          ${m.precisionStatement ? html`<p class="statement">${richText(m.precisionStatement)}</p>` : nothing}
          ${adviceProblems(this, this.context, this.advice)}
          ${groupTips(m.tips).map(
            ([group, tips]) => html`<h3>${group}</h3>
              <ul class="tips">
                ${tips.map((tip) => html`<li>${this.renderTip(tip)}</li>`)}
              </ul>`,
          )}
        </section>
        ${m.stepTime && m.stepTime.steps > 0
          ? html`<section class="card wide" aria-label="Step-time graph">
              <h2>Step-time graph</h2>
              <pf-echart
                class="step-time"
                label="Step time per step, stacked by component"
                .option=${(theme: Parameters<typeof stackedBarOption>[1]) => stackedBarOption(m.stepTime!.chart, theme)}
              ></pf-echart>
            </section>`
          : nothing}
        <section class="card wide top-ops" aria-label="Top 10 operations">
          <h2>${this.noFrameworkOps ? 'Top 10 TensorFlow operations' : `Top 10 operations${this.topOpsNote ? ` on ${this.topOpsNote}` : ''} by self time`}</h2>
          ${this.topOps
            ? html`<pf-data-table .table=${this.topOps} caption="Top 10 operations" csv-name="top_ops.csv"></pf-data-table>`
            : this.noFrameworkOps
              ? this.renderNoFrameworkOps()
              : html`<p class="muted">${this.topOpsNote === '' ? 'Loading…' : 'No operations.'}</p>`}
        </section>
        <section class="card environment" aria-label="Run environment">
          <h2>Run environment</h2>
          ${m.environment.length ? metricList(m.environment) : html`<p class="muted">Not recorded.</p>`}
          ${m.hosts.length
            ? html`<ul>
                ${m.hosts.map((h) => html`<li>${String(h.host_id ?? '')} ${String(h.command_line ?? '')}</li>`)}
              </ul>`
            : nothing}
        </section>
        ${m.inferenceLatency
          ? html`<section class="card" aria-label="Inference latency">
              <h2>Inference latency</h2>
              <pf-data-table .table=${m.inferenceLatency} caption="Inference latency"></pf-data-table>
            </section>`
          : nothing}
      </div>
    `;
  }

  private renderTip(tip: Tip) {
    if (!tip.tool || !this.context) return richText(tip.text);
    const rest = tip.text.replace(/^\s*[a-z_]+/, '');
    return html`${toolLink(this, this.context.run, tip.tool)}${richText(rest)}`;
  }

  /** TF stats is not listed: the profile has no TensorFlow op. Say so, and where its ops are. */
  private renderNoFrameworkOps() {
    const listed = this.context.tools ?? [];
    const tools = XLA_OP_TOOLS.map((t) => runToolFor(t, listed)).filter((t): t is string => !!t);
    return html`<p class="no-framework-ops">
      This profile has no TensorFlow ops, so there is no top 10 of them.
      ${tools.length
        ? html`Its XLA ops are in ${tools.map((t, i) => html`${i ? ' and ' : ''}${toolLink(this, this.context.run, t)}`)}.`
        : 'This run records no XLA ops either.'}
    </p>`;
  }

  private async loadTopOps(): Promise<void> {
    const context = this.context;
    const tool = runToolFor('framework_op_stats', context?.tools ?? []);
    if (context && !tool && context.tools?.length) {
      this.noFrameworkOps = true;
      return;
    }
    if (!context || !tool) {
      this.topOpsNote = 'this run (no op statistics)';
      return;
    }
    try {
      const payload = await context.api.toolData(context.run, tool, context.host);
      const ops = topOps(opStatsTables(payload).withoutIdle, 10);
      this.topOpsNote = ops[0]?.side === 'Device' ? 'the device' : 'the host';
      this.topOps = ops.length ? topOpsTable(ops) : null;
    } catch {
      this.topOpsNote = 'this run (op statistics unavailable)';
    }
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'pf-overview-view': OverviewView;
  }
}
