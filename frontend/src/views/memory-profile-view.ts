/**
 * The memory profile dashboard: memory-id selector (kept in the URL as `memory_id`), summary
 * card, timeline (stack / heap / free stacked, fragmentation on the right axis; hovering shows
 * the allocation event) and the breakdown of allocations live at the peak.
 */
import { LitElement, html, nothing } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import '../charts/echart';
import { timelineOption } from '../charts/options';
import type { ChartTheme } from '../charts/theme';
import '../components/data-table';
import { dashboardStyles, metricList } from '../components/dashboard-parts';
import { controlStyles } from '../components/shared-styles';
import { isMemoryProfile, memoryChartModel, memoryIds, memoryModel, type MemoryModel } from '../models/memory-profile';
import { readViewParam, writeViewParam } from '../view-params';
import type { ToolContext, ToolViewElement } from './contract';

export const MEMORY_PROFILE_VIEW_TAG = 'pf-memory-profile-view';

@customElement(MEMORY_PROFILE_VIEW_TAG)
export class MemoryProfileView extends LitElement implements ToolViewElement {
  @property({ attribute: false }) context!: ToolContext;
  @property({ attribute: false }) data: unknown;
  @state() private memoryId = readViewParam('memory_id');
  private ids: string[] = [];
  private model: MemoryModel | null = null;

  static override styles = [controlStyles, dashboardStyles];

  override willUpdate(changed: Map<PropertyKey, unknown>): void {
    if (!isMemoryProfile(this.data)) return;
    if (changed.has('data')) this.ids = memoryIds(this.data);
    if (!this.ids.includes(this.memoryId)) this.memoryId = this.ids[0] ?? '';
    if (changed.has('data') || changed.has('memoryId')) this.model = memoryModel(this.data, this.memoryId);
  }

  override render() {
    if (!isMemoryProfile(this.data) || this.ids.length === 0) {
      return html`<p class="muted">No memory allocations were recorded in this profile (the allocator reports none).</p>`;
    }
    const m = this.model;
    return html`
      <div class="toolbar">
        <label
          >Memory id
          <select name="memory_id" @change=${this.onMemoryId}>
            ${this.ids.map((id) => html`<option .value=${id} ?selected=${id === this.memoryId}>${id}</option>`)}
          </select>
        </label>
      </div>
      ${m
        ? html`<section class="card wide summary" aria-label="Memory summary">
              <h2>Summary of ${m.id}</h2>
              ${metricList(m.summary)}
            </section>
            <section class="card wide" aria-label="Memory timeline">
              <h2>Memory timeline</h2>
              ${m.timeline.hideFree ? html`<p class="muted">Free memory is hidden (it dwarfs the usage); click it in the legend to show it.</p>` : nothing}
              <pf-echart
                class="memory-timeline"
                height="360"
                label="Memory use over time"
                .option=${(theme: ChartTheme) => timelineOption(memoryChartModel(m.timeline), theme)}
              ></pf-echart>
            </section>
            <section class="card wide" aria-label="Memory breakdown at the peak">
              <h2>Memory breakdown at the peak</h2>
              <pf-data-table .table=${m.breakdown} caption="Memory breakdown at the peak" csv-name=${`memory_breakdown_${m.id}.csv`}></pf-data-table>
            </section>`
        : nothing}
    `;
  }

  private onMemoryId(event: Event): void {
    this.memoryId = (event.target as HTMLSelectElement).value;
    writeViewParam('memory_id', this.memoryId);
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'pf-memory-profile-view': MemoryProfileView;
  }
}
