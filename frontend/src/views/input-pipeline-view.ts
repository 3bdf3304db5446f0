/**
 * The input-pipeline analyzer dashboard: verdict, device-side step-time graph and statistics,
 * host-side input-time breakdown, recommendations, and the (collapsible) input-op table.
 */
import { LitElement, html, nothing } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import '../charts/echart';
import { pieOption, stackedBarOption } from '../charts/options';
import type { ChartTheme } from '../charts/theme';
import '../components/data-table';
import { breakdownTable, dashboardStyles, diagnosticsCard, metricList, richText } from '../components/dashboard-parts';
import { controlStyles } from '../components/shared-styles';
import { inputPipelineModel, type InputPipelineModel } from '../models/input-pipeline';
import { formatMs } from '../format';
import { formatNumber } from '../format';
import { tableRows } from '../table/datatable';
import type { ToolContext, ToolViewElement } from './contract';

export const INPUT_PIPELINE_VIEW_TAG = 'pf-input-pipeline-view';

@customElement(INPUT_PIPELINE_VIEW_TAG)
export class InputPipelineView extends LitElement implements ToolViewElement {
  @property({ attribute: false }) context!: ToolContext;
  @property({ attribute: false }) data: unknown;
  private model: InputPipelineModel | null = null;

  static override styles = [controlStyles, dashboardStyles];

  override willUpdate(changed: Map<PropertyKey, unknown>): void {
    if (changed.has('data')) this.model = inputPipelineModel(this.data);
  }

  override render() {
    const m = this.model;
    if (!m) return nothing;
    const step = m.stepTime;
    const { api, run, tool, host } = this.context;
    return html`
      ${diagnosticsCard(m.diagnostics)}
      <section class="card wide summary" aria-label="Summary">
        <h2>Summary</h2>
        ${step?.conclusion
          ? html`<p class="statement verdict">${richText(step.conclusion)}</p>`
          : html`<p class="muted">No verdict: no step time was measured.</p>`}
        ${step?.nextStep ? html`<p class="statement">${richText(step.nextStep)}</p>` : nothing}
      </section>
      <div class="grid">
        <section class="card wide" aria-label="Device-side analysis">
          <h2>Device-side analysis: step time</h2>
          ${step && step.steps > 0
            ? html`${metricList([
                  { label: 'Average step time', value: formatMs(step.averageMs) },
                  { label: 'Standard deviation', value: formatMs(step.deviationMs) },
                  { label: 'Minimum', value: formatMs(step.minimumMs) },
                  { label: 'Maximum', value: formatMs(step.maximumMs) },
                  { label: 'Steps', value: String(step.steps) },
                  { label: 'Hardware', value: step.hardwareType || '—' },
                ])}
                <pf-echart
                  class="step-time"
                  label="Step time per step, stacked by component"
                  .option=${(theme: ChartTheme) => stackedBarOption(step.chart, theme)}
                ></pf-echart>
                ${step.components.length ? breakdownTable(step.components) : nothing}`
            : html`<p class="muted">No steps were found in this profile.</p>`}
        </section>
        <section class="card" aria-label="Host-side analysis">
          <h2>Host-side analysis: input time</h2>
          ${m.hostBreakdown.slices.length
            ? html`<p>Total input processing on the host: <strong>${formatNumber(Math.round(m.hostInputMs * 1000) / 1000)} ms</strong></p>
                <pf-echart
                  class="pie host-breakdown"
                  height="260"
                  label="Host-side input time by category"
                  .option=${(theme: ChartTheme) => pieOption(m.hostBreakdown, theme)}
                ></pf-echart>`
            : html`<p class="muted">No input processing was recorded on the host.</p>`}
        </section>
        <section class="card" aria-label="Recommendations">
          <h2>What to do next</h2>
          ${m.recommendations.length
            ? html`<ul class="tips">
                ${m.recommendations.map((text) => html`<li>${richText(text)}</li>`)}
              </ul>`
            : html`<p class="muted">No recommendation.</p>`}
        </section>
      </div>
      ${m.inputOps
        ? html`<section class="card wide" aria-label="Input-op statistics">
            <details ?open=${tableRows(m.inputOps).length <= 50}>
              <summary>Input-op statistics (${tableRows(m.inputOps).length} ops)</summary>
              <pf-data-table
                .table=${m.inputOps}
                caption="Input-op statistics"
                csv-href=${api.csvUrl(run, tool, host, m.inputOpsIndex >= 0 ? m.inputOpsIndex : undefined)}
              ></pf-data-table>
            </details>
          </section>`
        : nothing}
    `;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'pf-input-pipeline-view': InputPipelineView;
  }
}
