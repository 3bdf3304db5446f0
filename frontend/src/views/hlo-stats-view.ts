/**
 * hlo_stats: the HLO ops of every program by self time — summary, pie of self time by category,
 * and the table (Export as CSV); an op's name opens it in the graph viewer.
 */
import { LitElement, html, nothing } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import '../charts/echart';
import { pieOption } from '../charts/options';
import type { ChartTheme } from '../charts/theme';
import '../components/data-table';
import { dashboardStyles, metricList } from '../components/dashboard-parts';
import { controlStyles } from '../components/shared-styles';
import { topSlices, type PieModel } from '../models/chart-models';
import { fractionsAsPercent } from '../models/gviz';
import { isDataTable, tableRows, type DataColumn, type DataRow, type DataTable } from '../table/datatable';
import { formatNumber } from '../format';
import type { ToolContext, ToolViewElement } from './contract';
import { graphHref, moduleList, openInGraphViewer } from './xla-parts';

export const HLO_STATS_VIEW_TAG = 'pf-hlo-stats-view';

const COLUMN = { program: 1, category: 2, op: 3, selfTime: 9 };

/** Program id → module name as `module_list` names it (`jit_step(8)` is program 8). */
export function modulesById(modules: readonly string[]): Map<string, string> {
  return new Map(modules.map((m) => [/\((\d+)\)$/.exec(m)?.[1] ?? m, m]));
}

export function categoryPie(table: DataTable): PieModel {
  const byCategory = new Map<string, number>();
  for (const row of tableRows(table)) {
    const category = String(row.c[COLUMN.category]?.v ?? '');
    byCategory.set(category, (byCategory.get(category) ?? 0) + Number(row.c[COLUMN.selfTime]?.v ?? 0));
  }
  const slices = [...byCategory].map(([name, value]) => ({ name, value: value / 1000 })).sort((a, b) => b.value - a.value);
  return { title: 'Self time by category', slices: topSlices(slices), unit: 'ms' };
}

/** What a reader compares first; the Columns menu has the rest (rates, TPU-only columns, ...). */
const FIRST_COLUMNS = [
  'rank',
  'category',
  'hlo_op_name',
  'tf_op_name',
  'occurrences',
  'total_self_time',
  'total_self_time_percent',
  'cumulative_total_self_time_percent',
  'model_flop_rate',
];
/** The converter writes these "(%)" columns as fractions (0.166); the page shows percentages. */
const FRACTION_COLUMNS = new Set(['total_self_time_percent', 'cumulative_total_self_time_percent']);

const SHORT_LABELS = {
  hlo_op_name: 'HLO op',
  tf_op_name: 'Framework op',
  total_self_time: 'Self time (us)',
  total_self_time_percent: 'Self time (%)',
  cumulative_total_self_time_percent: 'Cumulative (%)',
};

@customElement(HLO_STATS_VIEW_TAG)
export class HloStatsView extends LitElement implements ToolViewElement {
  @property({ attribute: false }) context!: ToolContext;
  @property({ attribute: false }) data: unknown;
  @state() private modules = new Map<string, string>();

  static override styles = [controlStyles, dashboardStyles];

  override willUpdate(changed: Map<PropertyKey, unknown>): void {
    if (changed.has('context')) void this.loadModules();
  }

  private async loadModules(): Promise<void> {
    try {
      this.modules = modulesById(await moduleList(this.context.api, this.context.run));
    } catch {
      this.modules = new Map(); // ops stay plain text without module names
    }
  }

  override render() {
    if (!isDataTable(this.data)) return html`<p class="muted">This payload holds no HLO op table.</p>`;
    const table = this.data;
    const rows = tableRows(table);
    const total = rows.reduce((sum, r) => sum + Number(r.c[COLUMN.selfTime]?.v ?? 0), 0);
    const pie = categoryPie(table);
    const { api, run, tool, host } = this.context;
    const link = (row: DataRow, column: DataColumn) => {
      const module = this.modules.get(String(row.c[COLUMN.program]?.v ?? ''));
      return column.id === 'hlo_op_name' && module ? graphHref(run, module, String(row.c[COLUMN.op]?.v ?? '')) : null;
    };
    return html`
      <div class="grid">
        <section class="card summary" aria-label="HLO op summary">
          <h2>Summary</h2>
          ${metricList([
            { label: 'HLO ops', value: String(rows.length) },
            { label: 'Programs', value: String(new Set(rows.map((r) => r.c[COLUMN.program]?.v)).size) },
            { label: 'Total self time', value: `${formatNumber(Math.round(total) / 1000)} ms` },
            { label: 'Top op', value: String(rows[0]?.c[COLUMN.op]?.v ?? '—') },
          ])}
        </section>
        ${pie.slices.length
          ? html`<section class="card" aria-label=${pie.title}>
              <h2>${pie.title}</h2>
              <pf-echart class="pie" height="280" label=${pie.title} .option=${(t: ChartTheme) => pieOption(pie, t)}></pf-echart>
            </section>`
          : nothing}
      </div>
      <section class="card wide" aria-label="HLO ops">
        <h2>HLO ops</h2>
        <pf-data-table
          .table=${fractionsAsPercent(table, FRACTION_COLUMNS)}
          .cellLink=${link}
          .columns=${FIRST_COLUMNS}
          .shortColumns=${['hlo_op_name', 'hlo_op_expression', 'tf_op_name']}
          .labels=${SHORT_LABELS}
          caption="HLO ops"
          csv-href=${api.csvUrl(run, tool, host)}
          @pf-cell-link=${this.onLink}
        ></pf-data-table>
      </section>
    `;
  }

  private onLink(event: CustomEvent<{ row: DataRow }>): void {
    const row = event.detail.row;
    const module = this.modules.get(String(row.c[COLUMN.program]?.v ?? ''));
    if (module) openInGraphViewer(this, module, String(row.c[COLUMN.op]?.v ?? ''));
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'pf-hlo-stats-view': HloStatsView;
  }
}
