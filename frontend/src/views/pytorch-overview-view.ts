/**
 * The PyTorch overview dashboard (pytorch_overview): the average step and its parts, a stacked
 * bar per step, then the server's tables (breakdown, GPU summary, environment) with CSV export.
 */
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import '../charts/echart';
import { stackedBarOption } from '../charts/options';
import type { ChartTheme } from '../charts/theme';
import '../components/data-table';
import { dashboardStyles, metricList } from '../components/dashboard-parts';
import { controlStyles } from '../components/shared-styles';
import { pytorchOverviewModel, type PytorchOverviewModel } from '../models/pytorch-overview';
import { formatNumber } from '../format';
import type { ToolContext, ToolViewElement } from './contract';

export const PYTORCH_OVERVIEW_VIEW_TAG = 'pf-pytorch-overview-view';

@customElement(PYTORCH_OVERVIEW_VIEW_TAG)
export class PytorchOverviewView extends LitElement implements ToolViewElement {
  @property({ attribute: false }) context!: ToolContext;
  @property({ attribute: false }) data: unknown;
  private model: PytorchOverviewModel | null = null;

  static override styles = [
    controlStyles,
    dashboardStyles,
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

  override render() {
    const m = this.model;
    if (!m) return html`<p class="muted">This payload holds no step-time breakdown.</p>`;
    const { api, run, tool, host } = this.context;
    return html`
      <div class="grid">
        <section class="card summary" aria-label="Average step">
          <h2>Average step time: ${formatNumber(m.averageUs / 1000)} ms</h2>
          ${metricList(
            m.parts.map((p) => ({
              label: p.name,
              value: `${formatNumber(Math.round(p.us))} us (${formatNumber(Math.round(p.percent * 100) / 100)}%)`,
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
      </div>
      ${m.tables.map(
        ({ table, index, title }) =>
          html`<section class="card wide" aria-label=${title}>
            <h2>${title}</h2>
            <pf-data-table .table=${table} caption=${title} csv-href=${api.csvUrl(run, tool, host, index)}></pf-data-table>
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
