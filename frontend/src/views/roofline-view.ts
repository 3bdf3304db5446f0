/**
 * roofline_model: each HLO op's FLOP rate against its operational intensity under the roof
 * (peak FLOP rate and bandwidth from the table properties), and the op table. On a CPU the roof
 * is the user's or measured on the server's machine; `peak_source` says which and is shown.
 */
import { LitElement, html } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import '../charts/echart';
import type { ChartTheme } from '../charts/theme';
import { rooflineOption, type RooflineModel } from '../charts/xla-options';
import '../components/data-table';
import { dashboardStyles, metricList } from '../components/dashboard-parts';
import { controlStyles } from '../components/shared-styles';
import { isDataTable, tableRows, type DataTable } from '../table/datatable';
import { formatNumber } from '../format';
import type { ToolContext, ToolViewElement } from './contract';
import './roofline-peaks';
import { peakParams, type PeaksDetail } from './roofline-peaks';

export const ROOFLINE_VIEW_TAG = 'pf-roofline-view';

export function rooflineModel(table: DataTable): RooflineModel {
  const index = (id: string) => table.cols.findIndex((c) => c.id === id);
  const [name, intensity, rate] = [index('operation'), index('operational_intensity'), index('measured_flop_rate')];
  return {
    points: tableRows(table).map((r) => ({
      name: String(r.c[name]?.v ?? ''),
      intensity: Number(r.c[intensity]?.v ?? 0),
      gflops: Number(r.c[rate]?.v ?? 0),
    })),
    peakGflops: Number(table.p?.peak_flop_rate ?? 0),
    peakGibS: Number(table.p?.peak_hbm_bw ?? 0),
  };
}

@customElement(ROOFLINE_VIEW_TAG)
export class RooflineView extends LitElement implements ToolViewElement {
  @property({ attribute: false }) context!: ToolContext;
  @property({ attribute: false }) data: unknown;

  /** The answer for the user's peaks (null: the shell's data, with measured or recorded ones). */
  @state() private given: unknown = null;
  @state() private peaksError = '';
  @state() private peaks: Record<string, string> = {};

  static override styles = [controlStyles, dashboardStyles];

  private async onPeaks(event: CustomEvent<PeaksDetail>): Promise<void> {
    const params = peakParams(event.detail);
    if (!Object.keys(params).length) {
      [this.given, this.peaksError, this.peaks] = [null, '', {}];
      return;
    }
    const { api, run, tool, host } = this.context;
    try {
      this.given = await api.getJson('data', { run, tag: tool, host: host || undefined, ...params });
      [this.peaksError, this.peaks] = ['', params];
    } catch (error) {
      this.peaksError = error instanceof Error ? error.message : String(error);
    }
  }

  override render() {
    const data = this.given ?? this.data;
    const table = Array.isArray(data) ? data.find(isDataTable) : undefined;
    if (!table) return html`<p class="muted">This payload holds no roofline table.</p>`;
    const model = rooflineModel(table);
    const { api, run, tool, host } = this.context;
    return html`
      <section class="card wide summary" aria-label="Device peaks">
        <h2>Roofline</h2>
        ${metricList([
          { label: 'Peak FLOP rate', value: `${formatNumber(model.peakGflops)} GFLOP/s` },
          { label: 'Peak memory bandwidth', value: `${formatNumber(Math.round(model.peakGibS))} GiB/s` },
          { label: 'Ridge point', value: `${formatNumber(Math.round((model.peakGflops / model.peakGibS) * 100) / 100)} FLOP/byte` },
          { label: 'Peaks', value: String(table.p?.peak_source ?? 'recorded in the profile') },
        ])}
        ${table.p?.device_type === 'CPU'
          ? html`<pf-roofline-peaks .error=${this.peaksError} @pf-peaks=${this.onPeaks}></pf-roofline-peaks>`
          : ''}
        <pf-echart class="roofline" height="360" label="Roofline" .option=${(t: ChartTheme) => rooflineOption(model, t)}></pf-echart>
      </section>
      <section class="card wide" aria-label="Roofline ops">
        <pf-data-table .table=${table} caption="Roofline ops" csv-href=${this.given ? api.url('data_csv', { run, tag: tool, host: host || undefined, table: 0, ...this.peaks }) : api.csvUrl(run, tool, host, 0)}></pf-data-table>
      </section>
    `;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'pf-roofline-view': RooflineView;
  }
}
