/**
 * The PyTorch overview dashboard (pytorch_overview): the average step and its parts, a stacked
 * bar per step, then the server's tables (breakdown, GPU summary, environment) with CSV export.
 */
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import '../charts/echart';
import { stackedBarOption } from '../charts/options';
import type { ChartTheme } from '../charts/theme';
import '../components/data-table';
import { dashboardStyles, metricList } from '../components/dashboard-parts';
import { controlStyles } from '../components/shared-styles';
import { pytorchOverviewModel, type PytorchOverviewModel } from '../models/pytorch-overview';
import { formatDuration, formatNumber } from '../format';
import { emptyReason } from '../table/datatable';
import type { AdvisorReport } from '../models/advisor';
import { adviceProblems, findingStyles, loadAdvice } from './advisor-view';
import type { ToolContext, ToolViewElement } from './contract';

export const PYTORCH_OVERVIEW_VIEW_TAG = 'pf-pytorch-overview-view';

@customElement(PYTORCH_OVERVIEW_VIEW_TAG)
export class PytorchOverviewView extends LitElement implements ToolViewElement {
  @property({ attribute: false }) context!: ToolContext;
  @property({ attribute: false }) data: unknown;
  @state() private advice: AdvisorReport | null = null;
  private model: PytorchOverviewModel | null = null;

  static override styles = [
    controlStyles,
    dashboardStyles,
    findingStyles,
    css`
      .swatch {
        display: inline-block;
        width: 0.8em;
        height: 0.8em;
        border-radius: 2px;
        margin-right: 6px;
        vertical-align: baseline;
      }
    `,
  ];

  override willUpdate(changed: Map<PropertyKey, unknown>): void {
    if (changed.has('data')) this.model = pytorchOverviewModel(this.data);
  }

  override firstUpdated(): void {
    // torch-tb-profiler's "Performance Recommendation": the advisor's checks, after first paint.
    void loadAdvice(this.context).then((report) => (this.advice = report));
  }

  override render() {
    const m = this.model;
    if (!m) return html`<p class="muted">This payload holds no step-time breakdown.</p>`;
    const { api, run, tool, host } = this.context;
    return html`
      <div class="grid">
        <section class="card summary" aria-label="Average step">
          <h2 title=${`${formatNumber(m.averageUs)} us`}>Average step time: ${formatDuration(m.averageUs / 1000)}</h2>
          ${metricList(
            m.parts.map((p) => ({
              label: p.name,
              value: `${formatDuration(p.us / 1000)} (${formatNumber(Math.round(p.percent * 100) / 100)}%)`,
            })),
          )}
          <p class="muted">${m.steps} step${m.steps === 1 ? '' : 's'}; each moment counts for the first busy part in this order.</p>
        </section>
        ${m.steps > 0
          ? html`<section class="card" aria-label="Step time per step">
              <h2>Step time per step</h2>
              <pf-echart class="steps" label="Step time per step, stacked by part" .option=${(theme: ChartTheme) => stackedBarOption(m.chart, theme)}></pf-echart>
            </section>`
          : nothing}
        ${this.advice?.findings.some((f) => f.severity !== 'info')
          ? html`<section class="card recommendation" aria-label="Performance recommendation">
              <h2>Performance recommendation</h2>
              ${adviceProblems(this, this.context, this.advice)}
            </section>`
          : nothing}
      </div>
      ${m.tables.map(
        ({ table, index, title }) =>
          html`<section class="card wide" aria-label=${title}>
            <h2>${title}</h2>
            ${emptyReason(table)
              ? html`<p class="muted empty-reason">${emptyReason(table)}</p>`
              : html`<pf-data-table .table=${table} caption=${title} csv-href=${api.csvUrl(run, tool, host, index)}></pf-data-table>`}
          </section>`,
      )}
    `;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'pf-pytorch-overview-view': PytorchOverviewView;
  }
}
