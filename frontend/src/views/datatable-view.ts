/**
 * Generic view for any DataTable payload, or a list of them (e.g. overview_page, op stats).
 * Each non-empty table gets a heading (from `p` or its position), its `p` properties in a
 * key/value panel, and a sortable, filterable table. Export as CSV links to the server's
 * `data_csv` route with `table=<position>` for tables of a list.
 */
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import '../components/data-table';
import { controlStyles } from '../components/shared-styles';
import {
  isDataTable,
  nameColumns,
  tableProperties,
  tableRows,
  tableTitle,
  type DataTable,
} from '../table/datatable';
import type { ToolContext, ToolViewElement } from './contract';

export const DATATABLE_VIEW_TAG = 'pf-datatable-view';

interface IndexedTable {
  table: DataTable;
  index: number;
}

/** Tables worth showing, with their position in the payload. */
export function visibleTables(payload: unknown): IndexedTable[] {
  const list = Array.isArray(payload) ? payload : [payload];
  return list
    .map((table, index) => ({ table, index }))
    .filter((entry): entry is IndexedTable => isDataTable(entry.table))
    .filter(({ table }) => table.cols.length > 0 || tableRows(table).length > 0 || tableProperties(table).length > 0);
}

@customElement(DATATABLE_VIEW_TAG)
export class DataTableView extends LitElement implements ToolViewElement {
  @property({ attribute: false }) context!: ToolContext;
  @property({ attribute: false }) data: unknown;

  static override styles = [
    controlStyles,
    css`
      :host {
        display: block;
      }
      section {
        margin: 16px 0 28px;
      }
      h2 {
        font-size: 1.05rem;
        margin: 0 0 6px;
      }
      details {
        margin: 4px 0 8px;
      }
      summary {
        cursor: pointer;
        color: var(--pf-muted);
      }
      dl {
        display: grid;
        grid-template-columns: max-content 1fr;
        gap: 2px 12px;
        margin: 6px 0;
        padding: 8px 12px;
        background: var(--pf-surface);
        border-radius: var(--pf-radius);
        font-size: 0.9em;
      }
      dt {
        font-family: var(--pf-mono);
        color: var(--pf-muted);
      }
      dd {
        margin: 0;
        overflow-wrap: anywhere;
        white-space: pre-wrap;
      }
    `,
  ];

  override render() {
    const tables = visibleTables(this.data);
    if (tables.length === 0) return html`<p class="muted">This tool returned no table data.</p>`;
    const multiple = Array.isArray(this.data);
    return tables.map(({ table, index }) => {
      const own = typeof table.p?.title === 'string' ? table.p.title : '';
      const title = multiple ? tableTitle(table, index) : own;
      // The title is the heading; only the other properties are listed, and only when there are any.
      const properties = tableProperties(table).filter(([key]) => !(key === 'title' && title === own));
      const exportable = table.cols.length > 0;
      return html`<section aria-label=${title || 'Table'}>
        ${title ? html`<h2>${title}</h2>` : nothing}
        ${properties.length
          ? html`<details ?open=${properties.length <= 8}>
              <summary>Properties (${properties.length})</summary>
              <dl>${properties.map(([key, value]) => html`<dt>${key}</dt><dd>${value}</dd>`)}</dl>
            </details>`
          : nothing}
        ${table.cols.length
          ? html`<pf-data-table
              .table=${table}
              .shortColumns=${nameColumns(table)}
              caption=${title || this.context?.tool || 'Table'}
              csv-href=${exportable && this.context ? this.csvUrl(multiple ? index : undefined) : ''}
            ></pf-data-table>`
          : nothing}
      </section>`;
    });
  }

  private csvUrl(table?: number): string {
    const { api, run, tool, host } = this.context;
    return api.csvUrl(run, tool, host, table);
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'pf-datatable-view': DataTableView;
  }
}
