/**
 * The pod viewer dashboard: a step slider (kept in the URL as `step`), stacked bars of the
 * step-time breakdown per core, and a detail card for the core under the pointer.
 */
import { LitElement, html, nothing } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import type { ChartHover } from '../charts/echart';
import '../charts/echart';
import { stackedBarOption } from '../charts/options';
import type { ChartTheme } from '../charts/theme';
import { dashboardStyles, diagnosticsCard } from '../components/dashboard-parts';
import { controlStyles } from '../components/shared-styles';
import { podStepCountNote } from '../models/pod-step-note';
import { isPodViewer, podDiagnostics, podStepModel, podSteps, type CoreDetail, type PodStepModel } from '../models/pod-viewer';
import { readViewParam, writeViewParam } from '../view-params';
import type { ToolContext, ToolViewElement } from './contract';

export const POD_VIEWER_VIEW_TAG = 'pf-pod-viewer-view';

@customElement(POD_VIEWER_VIEW_TAG)
export class PodViewerView extends LitElement implements ToolViewElement {
  @property({ attribute: false }) context!: ToolContext;
  @property({ attribute: false }) data: unknown;
  @state() private stepIndex = -1;
  @state() private detail: CoreDetail | null = null;
  private model: PodStepModel | null = null;

  static override styles = [controlStyles, dashboardStyles];

  override willUpdate(changed: Map<PropertyKey, unknown>): void {
    if (!isPodViewer(this.data)) return;
    const steps = podSteps(this.data);
    if (this.stepIndex < 0) {
      const wanted = readViewParam('step');
      const index = steps.findIndex((s) => String(s.stepNum ?? '') === wanted);
      this.stepIndex = index >= 0 ? index : 0;
    }
    if (changed.has('data') || changed.has('stepIndex')) {
      this.model = podStepModel(this.data, this.stepIndex);
      this.detail = this.model?.cores[0] ?? null;
    }
  }

  override render() {
    if (!isPodViewer(this.data)) return nothing;
    const steps = podSteps(this.data);
    const m = this.model;
    return html`
      ${diagnosticsCard(podDiagnostics(this.data))}
      ${steps.length === 0 || !m
        ? html`<p class="muted">No steps were found in this profile.</p>`
        : html`<div class="toolbar">
              <label
                >Step ${m.stepNum} (${this.stepIndex + 1} of ${steps.length})
                <input
                  type="range"
                  class="step-slider"
                  min="0"
                  max=${steps.length - 1}
                  .value=${String(this.stepIndex)}
                  @input=${this.onStep}
                  aria-label="Step"
                />
              </label>
              <span class="muted">Device type: ${this.data.deviceType || '—'}</span>
            </div>
            ${podStepCountNote(steps.length) ? html`<p class="muted step-count-note">${podStepCountNote(steps.length)}</p>` : nothing}
            <div class="grid">
              <section class="card wide" aria-label="Step-time breakdown per core">
                <h2>Step ${m.stepNum}: step-time breakdown per core</h2>
                <pf-echart
                  class="pod-chart"
                  label="Step-time breakdown per core"
                  .option=${(theme: ChartTheme) => stackedBarOption(m.chart, theme)}
                  @pf-chart-hover=${this.onHover}
                ></pf-echart>
              </section>
              ${this.detail ? this.renderDetail(this.detail) : nothing}
            </div>`}
    `;
  }

  private renderDetail(core: CoreDetail) {
    return html`<section class="card core-detail" aria-label="Core details" aria-live="polite">
      <h2>${core.label}</h2>
      <dl class="metrics">
        <div class="metric"><dt>Host</dt><dd>${core.host || '—'}</dd></div>
        <div class="metric"><dt>Chip / node</dt><dd>${core.chipId} / ${core.nodeId}</dd></div>
        <div class="metric"><dt>Step time</dt><dd>${core.totalMs.toFixed(3)} ms</dd></div>
        <div class="metric"><dt>Bottleneck</dt><dd>${core.bottleneck || '—'}</dd></div>
      </dl>
      <ul>
        ${core.parts.map((p) => html`<li>${p.name}: ${p.ms.toFixed(3)} ms</li>`)}
      </ul>
    </section>`;
  }

  private onStep(event: Event): void {
    this.stepIndex = Number((event.target as HTMLInputElement).value);
    const steps = isPodViewer(this.data) ? podSteps(this.data) : [];
    writeViewParam('step', String(steps[this.stepIndex]?.stepNum ?? this.stepIndex));
  }

  private onHover(event: CustomEvent<ChartHover>): void {
    const core = this.model?.cores[event.detail.dataIndex];
    if (core) this.detail = core;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'pf-pod-viewer-view': PodViewerView;
  }
}
