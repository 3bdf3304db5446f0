/**
 * model_view: the model's parameters (totals, per scope, per variable) and, for XLA programs,
 * the FLOPs and bytes per framework op and per HLO op computed from the HLO
 * (docs/model_view.md). Each table exports as CSV.
 */
import { LitElement, html, nothing } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import '../components/data-table';
import { dashboardStyles, metricList } from '../components/dashboard-parts';
import type { Metric } from '../models/overview';
import { controlStyles } from '../components/shared-styles';
import { isDataTable, type DataTable } from '../table/datatable';
import { formatNumber } from '../format';
import type { ToolContext, ToolViewElement } from './contract';

export const MODEL_VIEW_TAG = 'pf-model-view';

const CAPTIONS = ['Parameters', 'Parameters per scope', 'FLOPs per framework op', 'FLOPs per HLO op'];
/** The FLOP tables' first columns; the Columns menu has the rest (totals, bytes, time). */
const COST_COLUMNS = ['op', 'framework_op', 'occurrences', 'flops_per_run', 'flop_rate', 'operational_intensity'];
const COST_LABELS = { flop_rate: 'GFLOP/s', operational_intensity: 'FLOP/byte' };

/** Parameter counts grouped by thousands (31,504), as model summaries print them. */
const count = (value: unknown) =>
  value === undefined || value === null ? undefined : Math.round(Number(value)).toLocaleString('en-US');
const bytes = (value: unknown) =>
  value === undefined || value === null ? undefined : `${formatNumber(Math.round(Number(value) / 1024))} KiB`;

/** The summary's figures, from the first table's properties. */
export function modelSummary(table: DataTable): Metric[] {
  const p: Record<string, unknown> = table.p ?? {};
  const metrics: Array<Metric | null> = [
    { label: 'Source', value: String(p.source ?? '—') },
    p.trainable_parameters !== undefined
      ? { label: 'Trainable parameters', value: `${count(p.trainable_parameters)} (${bytes(p.trainable_bytes)})` }
      : null,
    p.largest_program !== undefined
      ? { label: `Parameters of ${String(p.largest_program)}`, value: count(p.largest_program_parameters) ?? '—' }
      : null,
    { label: 'All variables / arguments', value: `${count(p.total_parameters) ?? '—'} (${bytes(p.total_bytes) ?? '—'})` },
  ];
  return metrics.filter((m): m is Metric => m !== null);
}

@customElement(MODEL_VIEW_TAG)
export class ModelView extends LitElement implements ToolViewElement {
  @property({ attribute: false }) context!: ToolContext;
  @property({ attribute: false }) data: unknown;

  static override styles = [controlStyles, dashboardStyles];

  override render() {
    const tables = Array.isArray(this.data) ? this.data.filter(isDataTable) : [];
    if (!tables.length) return html`<p class="muted">This payload holds no model tables.</p>`;
    const { api, run, tool, host } = this.context;
    return html`
      <section class="card wide summary" aria-label="Model summary">
        <h2>Model</h2>
        ${metricList(modelSummary(tables[0]))}
      </section>
      ${tables.map((table, index) =>
        table.rows.length || index < 2
          ? html`<section class="card wide" aria-label=${CAPTIONS[index] ?? `Table ${index}`}>
              <h2>${CAPTIONS[index] ?? `Table ${index}`}</h2>
              <pf-data-table
                .table=${table}
                .columns=${index >= 2 ? COST_COLUMNS : []}
                .labels=${index >= 2 ? COST_LABELS : {}}
                .shortColumns=${['name', 'framework_op', 'op', 'category']}
                caption=${CAPTIONS[index] ?? `Table ${index}`}
                csv-href=${api.csvUrl(run, tool, host, index)}
              ></pf-data-table>
            </section>`
          : nothing,
      )}
    `;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'pf-model-view': ModelView;
  }
}
