/**
 * The TF stats dashboard (framework_op_stats): up to four pies of self time (host/device, by
 * operation and by type), an Include IDLE toggle that switches between the two tables, and the
 * op table with host/device, type and name filters.
 */
import { LitElement, html, nothing } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import '../charts/echart';
import { pieOption } from '../charts/options';
import type { ChartTheme } from '../charts/theme';
import '../components/data-table';
import { dashboardStyles } from '../components/dashboard-parts';
import { controlStyles } from '../components/shared-styles';
import type { PieModel } from '../models/chart-models';
import {
  filterOps,
  isFiltered,
  NO_OP_FILTER,
  opFilterFor,
  opStatsPies,
  opStatsTables,
  opTableForDisplay,
  type OpFilter,
  type OpStatsTables,
} from '../models/op-stats';
import { tableRows, type DataTable } from '../table/datatable';
import { readViewParam, writeViewParam } from '../view-params';
import type { ToolContext, ToolViewElement } from './contract';

export const OP_STATS_VIEW_TAG = 'pf-op-stats-view';

/** What a reader compares first; the Columns menu has the rest (averages, cumulative %, eager). */
const FIRST_COLUMNS = [
  'rank', 'host_or_device', 'type', 'operation', 'occurrences', 'total_self_time',
  'device_total_self_time_percent', 'host_total_self_time_percent', 'measured_flop_rate', 'bound_by',
];
/** Header labels that fit a column (the full label is the header's tooltip and in the CSV). */
const SHORT_LABELS = {
  host_or_device: 'Host / device',
  type: 'Type',
  operation: 'Operation',
  occurrences: 'Occurrences',
  total_self_time: 'Self-time (us)',
  device_total_self_time_percent: 'Device self-time (%)',
  host_total_self_time_percent: 'Host self-time (%)',
  measured_flop_rate: 'FLOP rate (FLOPs/s)',
};

@customElement(OP_STATS_VIEW_TAG)
export class OpStatsView extends LitElement implements ToolViewElement {
  @property({ attribute: false }) context!: ToolContext;
  @property({ attribute: false }) data: unknown;
  @state() private includeIdle = readViewParam('idle') === '1';
  // "Show in TF stats" from the trace viewer arrives as `op_filter` in the URL; it becomes the
  // filter shown in the boxes once the table is known.
  @state() private filter: OpFilter = NO_OP_FILTER;
  private handedOver = new URLSearchParams(window.location.search).get('op_filter') ?? '';
  private tables: OpStatsTables = { withIdle: undefined, withoutIdle: undefined };
  private shownTables = new Map<DataTable, DataTable>();
  private pies: PieModel[] = [];
  private piesFor: unknown = null;

  static override styles = [controlStyles, dashboardStyles];

  override willUpdate(changed: Map<PropertyKey, unknown>): void {
    if (changed.has('data')) {
      this.tables = opStatsTables(this.data);
      this.shownTables.clear();
      if (this.handedOver) this.filter = opFilterFor(this.tables.withoutIdle ?? this.tables.withIdle, this.handedOver);
      this.handedOver = '';
    }
    const table = this.current();
    if (table !== this.piesFor) {
      this.piesFor = table;
      this.pies = opStatsPies(table);
    }
  }

  private current() {
    return this.includeIdle ? this.tables.withIdle : this.tables.withoutIdle;
  }

  override render() {
    const table = this.current();
    if (!table) return html`<p class="muted">This payload holds no op statistics.</p>`;
    const filtered = filterOps(this.shown(table), this.filter);
    const index = this.includeIdle ? 0 : Array.isArray(this.data) && this.data.length > 1 ? 1 : 0;
    const { api, run, tool, host } = this.context;
    return html`
      <div class="toolbar">
        <label class="inline idle-toggle">
          <input type="checkbox" .checked=${this.includeIdle} @change=${this.onIdle} /> Include IDLE time
        </label>
      </div>
      <section class="pies" aria-label="Self time charts">
        ${this.pies.map(
          (pie) => html`<div class="card">
            <h2>${pie.title}</h2>
            <pf-echart class="pie" height="260" label=${pie.title} .option=${(theme: ChartTheme) => pieOption(pie, theme)}></pf-echart>
          </div>`,
        )}
      </section>
      <section class="card wide" aria-label="Operations">
        <h2>Operations</h2>
        <div class="toolbar filters">
          <label
            >Host/device
            <select name="side" @change=${this.onFilter}>
              <option value="" ?selected=${this.filter.side === ''}>Host and device</option>
              <option value="Host" ?selected=${this.filter.side === 'Host'}>Host</option>
              <option value="Device" ?selected=${this.filter.side === 'Device'}>Device</option>
            </select>
          </label>
          <label
            >Operation type
            <input name="type" type="search" placeholder="e.g. MatMul" .value=${this.filter.type} @input=${this.onFilter}
          /></label>
          <label
            >Operation name
            <input name="name" type="search" placeholder="substring" .value=${this.filter.name} @input=${this.onFilter}
          /></label>
          ${isFiltered(this.filter)
            ? html`<button type="button" class="clear-filters" @click=${this.clearFilters}>Clear filters</button>`
            : nothing}
        </div>
        <pf-data-table
          .table=${filtered}
          total-rows=${tableRows(table).length}
          caption="Operations"
          .columns=${FIRST_COLUMNS}
          .shortColumns=${['operation', 'type']}
          .labels=${SHORT_LABELS}
          csv-href=${api.csvUrl(run, tool, host, index)}
        ></pf-data-table>
      </section>
      ${this.pies.length === 0 ? html`<p class="muted">No self time was recorded.</p>` : nothing}
    `;
  }

  private onIdle(event: Event): void {
    this.includeIdle = (event.target as HTMLInputElement).checked;
    writeViewParam('idle', this.includeIdle ? '1' : '');
  }

  /** The table with its "(%)" fractions as percentages, made once per table. */
  private shown(table: DataTable): DataTable {
    let shown = this.shownTables.get(table);
    if (!shown) this.shownTables.set(table, (shown = opTableForDisplay(table)));
    return shown;
  }

  private clearFilters(): void {
    this.filter = NO_OP_FILTER;
  }

  private onFilter(event: Event): void {
    const input = event.target as HTMLInputElement | HTMLSelectElement;
    this.filter = { ...this.filter, [input.name]: input.value };
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'pf-op-stats-view': OpStatsView;
  }
}
