/**
 * memory_viewer: one program's memory from its buffer assignment. Module selector (from
 * `module_list`, kept in the URL), summary, heap over program order with the peak marked, the
 * buffers alive at the peak (chart and table; a buffer's op links to the graph viewer).
 */
import { LitElement, html, nothing } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { ApiError } from '../api';
import '../charts/echart';
import type { ChartTheme } from '../charts/theme';
import { heapOption, peakBarsOption } from '../charts/xla-options';
import '../components/data-table';
import '../components/message-card';
import { dashboardStyles, metricList } from '../components/dashboard-parts';
import { controlStyles } from '../components/shared-styles';
import { isMemoryViewer, memoryViewerModel, opOfBuffer, type MemoryViewerModel } from '../models/xla';
import type { DataColumn, DataRow } from '../table/datatable';
import type { ToolContext, ToolViewElement } from './contract';
import { defaultModule, graphHref, MODULE_PARAM, moduleList, moduleSelect, openInGraphViewer, setUrlParams, urlParam } from './xla-parts';

export const MEMORY_VIEWER_VIEW_TAG = 'pf-memory-viewer-view';

@customElement(MEMORY_VIEWER_VIEW_TAG)
export class MemoryViewerView extends LitElement implements ToolViewElement {
  @property({ attribute: false }) context!: ToolContext;
  @state() private modules: string[] = [];
  @state() private module = '';
  @state() private model: MemoryViewerModel | null = null;
  @state() private error: ApiError | Error | null = null;
  @state() private loading = false;
  private abort: AbortController | null = null;

  static override styles = [controlStyles, dashboardStyles];

  override willUpdate(changed: Map<PropertyKey, unknown>): void {
    if (changed.has('context')) void this.loadModules();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.abort?.abort();
  }

  private async loadModules(): Promise<void> {
    try {
      this.modules = await moduleList(this.context.api, this.context.run);
      await this.select(defaultModule(this.modules, urlParam(MODULE_PARAM)));
    } catch (error) {
      this.error = error as Error;
    }
  }

  private async select(module: string): Promise<void> {
    this.module = module;
    setUrlParams({ [MODULE_PARAM]: module });
    this.abort?.abort();
    const abort = (this.abort = new AbortController());
    this.loading = true;
    this.error = null;
    try {
      const { api, run, tool, host } = this.context;
      const data = await api.getJson<unknown>('data', { run, tag: tool, host: host || undefined, module_name: module }, abort.signal);
      if (abort.signal.aborted) return;
      this.model = isMemoryViewer(data) ? memoryViewerModel(data) : null;
    } catch (error) {
      if (!abort.signal.aborted) this.error = error as Error;
    } finally {
      if (!abort.signal.aborted) this.loading = false;
    }
  }

  override render() {
    const m = this.model;
    const { api, run, tool, host } = this.context;
    const csv = api.url('data_csv', { run, tag: tool, host: host || undefined, module_name: this.module, view: 'tables' });
    const link = (row: DataRow, column: DataColumn) =>
      column.id === 'instruction_name' && typeof row.c[1]?.v === 'string' && !row.c[1].v.startsWith('small (')
        ? graphHref(run, this.module, opOfBuffer(row.c[1].v))
        : null;
    return html`
      <div class="toolbar">
        ${moduleSelect(this.modules, this.module, (module) => void this.select(module))}
        ${this.loading ? html`<span class="muted" role="status">Loading ${this.module}…</span>` : nothing}
      </div>
      ${this.error ? html`<pf-message kind="error" heading="Memory viewer" .message=${this.error.message}></pf-message>` : nothing}
      ${m
        ? html`<section class="card wide summary" aria-label="Memory summary">
              <h2>${m.module}</h2>
              ${metricList(m.summary)}
            </section>
            <section class="card wide" aria-label="Heap over program order">
              <h2>Heap over program order</h2>
              <pf-echart class="heap" height="300" label="Heap over program order" .option=${(t: ChartTheme) => heapOption(m.heap, t)}></pf-echart>
            </section>
            <section class="card wide" aria-label="Buffers at the peak">
              <h2>Largest buffers at the peak</h2>
              <pf-echart
                class="peak-buffers"
                height=${Math.max(160, 22 * m.peakBars.length + 40)}
                label="Largest buffers at the peak"
                .option=${(t: ChartTheme) => peakBarsOption(m.peakBars, t)}
              ></pf-echart>
              <pf-data-table
                .table=${m.peakTable}
                .cellLink=${link}
                caption="Buffers at the peak"
                csv-href=${csv}
                @pf-cell-link=${this.onLink}
              ></pf-data-table>
            </section>`
        : nothing}
    `;
  }

  private onLink(event: CustomEvent<{ row: DataRow }>): void {
    const name = event.detail.row.c[1]?.v;
    if (typeof name === 'string') openInGraphViewer(this, this.module, opOfBuffer(name));
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'pf-memory-viewer-view': MemoryViewerView;
  }
}
