/**
 * The GPU kernel stats dashboard (kernel_stats): summary, pie of the top kernels by total time,
 * and the kernel table with kernel / op / Tensor Core filters. CPU profiles answer 404
 * NOT_APPLICABLE, which the tool view shows as an info card before this view is created.
 */
import { LitElement, html } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import '../charts/echart';
import { pieOption } from '../charts/options';
import type { ChartTheme } from '../charts/theme';
import '../components/data-table';
import { dashboardStyles, metricList } from '../components/dashboard-parts';
import { controlStyles } from '../components/shared-styles';
import type { PieModel } from '../models/chart-models';
import {
  filterKernels,
  kernelPie,
  kernelSummary,
  kernelTable,
  NO_KERNEL_FILTER,
  type KernelFilter,
} from '../models/kernel-stats';
import { formatNumber } from '../format';
import { tableRows, type DataTable } from '../table/datatable';
import type { ToolContext, ToolViewElement } from './contract';

export const KERNEL_STATS_VIEW_TAG = 'pf-kernel-stats-view';

/** What a reader compares first; the Columns menu has launch shapes, min / max and the rest. */
const FIRST_COLUMNS = [
  'rank', 'kernel_name', 'op_name', 'occurrences', 'total_duration_us', 'avg_duration_us',
  'occupancy_pct', 'is_kernel_using_tensor_core',
];

@customElement(KERNEL_STATS_VIEW_TAG)
export class KernelStatsView extends LitElement implements ToolViewElement {
  @property({ attribute: false }) context!: ToolContext;
  @property({ attribute: false }) data: unknown;
  @state() private filter: KernelFilter = NO_KERNEL_FILTER;
  private table: DataTable | undefined;
  private pie: PieModel | null = null;

  static override styles = [controlStyles, dashboardStyles];

  override willUpdate(changed: Map<PropertyKey, unknown>): void {
    if (changed.has('data')) {
      this.table = kernelTable(this.data);
      this.pie = this.table ? kernelPie(this.table) : null;
    }
  }

  override render() {
    const table = this.table;
    if (!table) return html`<p class="muted">This payload holds no kernel table.</p>`;
    const summary = kernelSummary(table);
    const filtered = filterKernels(table, this.filter);
    const { api, run, tool, host } = this.context;
    const share = summary.totalUs > 0 ? (100 * summary.tensorCoreUs) / summary.totalUs : 0;
    return html`
      <div class="grid">
        <section class="card summary" aria-label="Kernel summary">
          <h2>Summary</h2>
          ${metricList([
            { label: 'Distinct kernels', value: String(summary.kernels) },
            { label: 'Kernel × op rows', value: String(summary.rows) },
            { label: 'Total kernel time', value: `${formatNumber(Math.round(summary.totalUs) / 1000)} ms` },
            { label: 'Time in Tensor Core kernels', value: `${formatNumber(Math.round(share * 10) / 10)}%` },
          ])}
        </section>
        ${this.pie && this.pie.slices.length
          ? html`<section class="card" aria-label=${this.pie.title}>
              <h2>${this.pie.title}</h2>
              <pf-echart class="pie" height="280" label=${this.pie.title} .option=${(theme: ChartTheme) => pieOption(this.pie!, theme)}></pf-echart>
            </section>`
          : html``}
      </div>
      <section class="card wide" aria-label="Kernels">
        <h2>Kernels</h2>
        <div class="toolbar filters">
          <label>Kernel name <input name="kernel" type="search" placeholder="substring" @input=${this.onFilter} /></label>
          <label>Op name <input name="op" type="search" placeholder="substring" @input=${this.onFilter} /></label>
          <label
            >Tensor Cores
            <select name="tensorCore" @change=${this.onFilter}>
              <option value="">Any kernel</option>
              <option value="yes">Using Tensor Cores</option>
              <option value="no">Not using Tensor Cores</option>
              <option value="eligible-unused">Eligible op, not using them</option>
            </select>
          </label>
        </div>
        <pf-data-table
          .table=${filtered}
          total-rows=${tableRows(table).length}
          caption="Kernels"
          .columns=${FIRST_COLUMNS}
          .shortColumns=${['kernel_name', 'op_name']}
          csv-href=${api.csvUrl(run, tool, host)}
        ></pf-data-table>
      </section>
    `;
  }

  private onFilter(event: Event): void {
    const input = event.target as HTMLInputElement | HTMLSelectElement;
    this.filter = { ...this.filter, [input.name]: input.value };
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'pf-kernel-stats-view': KernelStatsView;
  }
}
