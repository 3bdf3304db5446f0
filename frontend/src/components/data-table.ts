/**
 * One gviz DataTable with sorting (click a header), a text filter, paging and a row count.
 * All cell text goes through Lit text bindings: profile strings are never parsed as HTML.
 *
 *   <pf-data-table .table=${table} csv-href=${url}></pf-data-table>
 */
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { csvFileName, tableToCsv } from '../table/csv';
import { cellAt, columnLabel, tableRows, type DataColumn, type DataRow, type DataTable } from '../table/datatable';
import { filterRows } from '../table/filter';
import { formatCell } from '../table/format';
import { DEFAULT_PAGE_SIZE, pageInfo } from '../table/page';
import { nextSort, sortRows, type SortState } from '../table/sort';
import { controlStyles, tableStyles } from './shared-styles';

@customElement('pf-data-table')
export class DataTableElement extends LitElement {
  @property({ attribute: false }) table: DataTable = { cols: [], rows: [] };
  /**
   * When set, an "Export as CSV" link to this URL (the server's data_csv route). Otherwise the
   * button writes the CSV of this table in the page (for tables the page derived itself).
   */
  @property({ attribute: 'csv-href' }) csvHref = '';
  @property({ attribute: 'csv-name' }) csvName = '';
  @property({ type: Number, attribute: 'page-size' }) pageSize = DEFAULT_PAGE_SIZE;
  /** Accessible name of the table. */
  @property() caption = '';
  /**
   * Optional links in cells (e.g. an HLO op to the graph viewer): the href for a cell, or null.
   * A plain click fires `pf-cell-link` ({row, column}) instead of following the href.
   */
  @property({ attribute: false }) cellLink: ((row: DataRow, column: DataColumn) => string | null) | null = null;

  @state() private sort: SortState | null = null;
  @state() private query = '';
  @state() private page = 0;

  static override styles = [
    controlStyles,
    tableStyles,
    css`
      :host {
        display: block;
      }
      .toolbar {
        display: flex;
        flex-wrap: wrap;
        align-items: center;
        gap: 8px;
        margin: 8px 0;
      }
      .toolbar input {
        min-width: 14rem;
      }
      .count {
        color: var(--pf-muted);
        margin-right: auto;
      }
      .scroll {
        overflow: auto;
        max-height: 70vh;
        border: 1px solid var(--pf-border);
        border-radius: var(--pf-radius);
      }
      th button {
        all: unset;
        cursor: pointer;
        display: inline-flex;
        gap: 4px;
        align-items: center;
      }
      th button:focus-visible {
        outline: 2px solid var(--pf-focus);
        outline-offset: 2px;
      }
      .arrow {
        color: var(--pf-muted);
        font-size: 0.8em;
        min-width: 1em;
      }
      .pager {
        display: flex;
        gap: 6px;
        align-items: center;
        margin: 8px 0;
      }
      td {
        overflow-wrap: break-word;
        max-width: 40rem;
      }
      td.number,
      th.number {
        white-space: nowrap;
      }
    `,
  ];

  override willUpdate(changed: Map<PropertyKey, unknown>): void {
    if (changed.has('table')) {
      this.sort = null;
      this.page = 0;
    }
  }

  override render() {
    const columns = Array.isArray(this.table.cols) ? this.table.cols : [];
    const allRows = tableRows(this.table);
    const filtered = filterRows(allRows, this.query);
    const sorted = sortRows(filtered, this.sort);
    const info = pageInfo(sorted.length, this.page, this.pageSize);
    const visible = sorted.slice(info.start, info.end);
    return html`
      <div class="toolbar">
        <span class="count" role="status">${this.countText(filtered.length, allRows.length)}</span>
        <label>
          <span class="visually-hidden">Filter rows</span>
          <input
            type="search"
            placeholder="Filter rows"
            .value=${this.query}
            @input=${this.onFilter}
            aria-label="Filter rows"
          />
        </label>
        ${this.csvHref
          ? html`<a class="button export" href=${this.csvHref} download=${this.csvName || nothing}>Export as CSV</a>`
          : html`<button type="button" class="export" @click=${this.exportCsv}>Export as CSV</button>`}
      </div>
      <div class="scroll">
        <table aria-label=${this.caption || nothing} aria-rowcount=${filtered.length + 1}>
          <thead>
            <tr>
              ${columns.map((column, index) => this.renderHeader(column, index))}
            </tr>
          </thead>
          <tbody>
            ${visible.map(
              (row) => html`<tr>
                ${columns.map((column, index) => {
                  const cell = cellAt(row, index);
                  const isNull = cell === null || cell.v === null || cell.v === undefined;
                  const classes = `${isNumeric(column) ? 'number' : ''} ${isNull ? 'null' : ''}`;
                  const text = isNull && !cell?.f ? '—' : formatCell(cell);
                  const href = isNull ? null : (this.cellLink?.(row, column) ?? null);
                  return html`<td class=${classes}>${href ? html`<a href=${href} @click=${(e: MouseEvent) => this.onLink(e, row, column)}>${text}</a>` : text}</td>`;
                })}
              </tr>`,
            )}
          </tbody>
        </table>
      </div>
      ${info.pageCount > 1 ? this.renderPager(info.page, info.pageCount, info.start, info.end, sorted.length) : nothing}
    `;
  }

  private onLink(event: MouseEvent, row: DataRow, column: DataColumn): void {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
    event.preventDefault();
    this.dispatchEvent(new CustomEvent('pf-cell-link', { detail: { row, column }, bubbles: true, composed: true }));
  }

  private renderHeader(column: DataColumn, index: number) {
    const sorted = this.sort?.column === index ? this.sort.direction : null;
    const ariaSort = sorted === 'asc' ? 'ascending' : sorted === 'desc' ? 'descending' : 'none';
    const label = columnLabel(column, index);
    return html`<th class=${isNumeric(column) ? 'number' : ''} aria-sort=${ariaSort} scope="col">
      <button type="button" @click=${() => this.onSort(index)} title=${column.id ?? label}>
        ${label}<span class="arrow" aria-hidden="true">${sorted === 'asc' ? '▲' : sorted === 'desc' ? '▼' : ''}</span>
      </button>
    </th>`;
  }

  private renderPager(page: number, pageCount: number, start: number, end: number, total: number) {
    const go = (target: number) => () => {
      this.page = target;
    };
    return html`<nav class="pager" aria-label="Pages">
      <button type="button" @click=${go(0)} ?disabled=${page === 0} aria-label="First page">«</button>
      <button type="button" @click=${go(page - 1)} ?disabled=${page === 0} aria-label="Previous page">‹</button>
      <span>Page ${page + 1} of ${pageCount} (rows ${start + 1}–${end} of ${total})</span>
      <button type="button" @click=${go(page + 1)} ?disabled=${page >= pageCount - 1} aria-label="Next page">›</button>
      <button type="button" @click=${go(pageCount - 1)} ?disabled=${page >= pageCount - 1} aria-label="Last page">
        »
      </button>
    </nav>`;
  }

  private countText(shown: number, total: number): string {
    const noun = total === 1 ? 'row' : 'rows';
    return shown === total ? `${total} ${noun}` : `${shown} of ${total} ${noun}`;
  }

  private exportCsv(): void {
    const blob = new Blob([tableToCsv(this.table)], { type: 'text/csv;charset=utf-8' });
    const url = URL.createObjectURL(blob);
    const link = document.createElement('a');
    link.href = url;
    link.download = this.csvName || csvFileName([this.caption || 'table']);
    link.hidden = true;
    this.renderRoot.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  }

  private onSort(column: number): void {
    this.sort = nextSort(this.sort, column);
    this.page = 0;
  }

  private onFilter(event: Event): void {
    this.query = (event.target as HTMLInputElement).value;
    this.page = 0;
  }
}

function isNumeric(column: DataColumn): boolean {
  return column.type === 'number';
}

declare global {
  interface HTMLElementTagNameMap {
    'pf-data-table': DataTableElement;
  }
}
