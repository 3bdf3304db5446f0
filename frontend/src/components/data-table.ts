/**
 * One gviz DataTable with sorting (click a header), a text filter, paging and a row count.
 * All cell text goes through Lit text bindings: profile strings are never parsed as HTML.
 * Wide tables stay readable: `.columns` names the columns shown first (a Columns menu shows the
 * others), `.shortColumns` the name columns kept on one line in the free width (full name on hover), and the
 * header row and first column stay in view while scrolling. CSV export always has every column:
 * "Export as CSV" the whole table, "Export as shown" the rows the filter keeps, in the order shown.
 *
 *   <pf-data-table .table=${table} .columns=${['rank', 'operation']} csv-href=${url}></pf-data-table>
 */
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { csvFileName, tableToCsv } from '../table/csv';
import { cellAt, columnLabel, tableRows, type DataColumn, type DataRow, type DataTable } from '../table/datatable';
import { filterRows } from '../table/filter';
import { formatCell } from '../table/format';
import { columnUnit, labelWithoutUnit, rawWithUnit } from '../table/units';
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
  /** Ids of the columns shown at first (all when empty); the Columns menu shows the others. */
  @property({ attribute: false }) columns: readonly string[] = [];
  /** Ids of name columns: one line each, cut with an ellipsis only where the width runs out (full name on hover). */
  @property({ attribute: false }) shortColumns: readonly string[] = [];
  /** Shorter header labels by column id (the export keeps the converter's labels). */
  @property({ attribute: false }) labels: Readonly<Record<string, string>> = {};
  /**
   * Rows before the view's own filters (op stats' side/type/name boxes), so the one count reads
   * "7 of 54 rows" against the whole table; the table's rows when unset.
   */
  @property({ type: Number, attribute: 'total-rows' }) totalRows = -1;
  /**
   * Optional links in cells (e.g. an HLO op to the graph viewer): the href for a cell, or null.
   * A plain click fires `pf-cell-link` ({row, column}) instead of following the href.
   */
  @property({ attribute: false }) cellLink: ((row: DataRow, column: DataColumn) => string | null) | null = null;

  /** Column ids the user switched on or off in the Columns menu. */
  @state() private shownByUser = new Map<string, boolean>();
  @state() private sort: SortState | null = null;
  @state() private query = '';
  @state() private page = 0;
  /** Width of each shown name column, in % of the table, from its longest name on this page. */
  private nameWidths = new Map<number, string>();

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
        max-width: 24rem;
      }
      /* A name takes the table's free width (its share is set per column), at least 12rem. */
      td.name {
        white-space: nowrap;
        overflow: hidden;
        text-overflow: ellipsis;
        max-width: 0;
        min-width: 12rem;
      }
      th {
        cursor: pointer;
        z-index: 1;
        vertical-align: bottom;
        min-width: 3.5rem;
      }
      th:first-child,
      td:first-child {
        position: sticky;
        left: 0;
        background: var(--pf-bg);
      }
      th:first-child {
        z-index: 2;
        background: var(--pf-surface);
      }
      details.columns {
        position: relative;
      }
      details.columns summary {
        cursor: pointer;
        padding: 4px 8px;
        border: 1px solid var(--pf-border);
        border-radius: var(--pf-radius);
      }
      details.columns fieldset {
        position: absolute;
        right: 0;
        z-index: 3;
        margin: 4px 0 0;
        padding: 8px 12px;
        max-height: 50vh;
        overflow: auto;
        background: var(--pf-bg);
        border: 1px solid var(--pf-border);
        border-radius: var(--pf-radius);
        white-space: nowrap;
      }
      details.columns label {
        display: block;
        padding: 2px 0;
      }
      td.number {
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

  /** Name cells get their column's width through the CSSOM (the page's CSP allows no style attributes). */
  override updated(): void {
    for (const td of this.renderRoot.querySelectorAll<HTMLElement>('td.name')) {
      td.style.width = this.nameWidths.get(Number(td.dataset.column)) ?? '';
    }
  }

  override render() {
    const allColumns = Array.isArray(this.table.cols) ? this.table.cols : [];
    const shown = allColumns.map((column, index) => ({ column, index })).filter(({ column }) => this.isShown(column));
    const allRows = tableRows(this.table);
    const filtered = filterRows(allRows, this.query);
    const sorted = sortRows(filtered, this.sort);
    const info = pageInfo(sorted.length, this.page, this.pageSize);
    const visible = sorted.slice(info.start, info.end);
    this.nameWidths = nameShares(shown, visible, this.shortColumns);
    return html`
      <div class="toolbar">
        <span class="count" role="status">${this.countText(filtered.length, Math.max(this.totalRows, allRows.length))}</span>
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
        ${this.renderColumnMenu(allColumns)}
        ${this.csvHref
          ? html`<a class="button export" href=${this.csvHref} download=${this.csvName || nothing}>Export as CSV</a>`
          : html`<button type="button" class="export" @click=${() => this.exportCsv(this.table)}>Export as CSV</button>`}
        <button
          type="button"
          class="export-shown"
          title="The rows on screen, filtered and sorted as shown (every column, raw values)"
          @click=${() => this.exportCsv({ cols: this.table.cols, rows: sorted })}
        >
          Export as shown
        </button>
      </div>
      <div class="scroll">
        <table
          aria-label=${this.caption || nothing}
          aria-rowcount=${filtered.length + 1}
        >
          <thead>
            <tr>
              ${shown.map(({ column, index }) => this.renderHeader(column, index))}
            </tr>
          </thead>
          <tbody>
            ${visible.map(
              (row) => html`<tr>
                ${shown.map(({ column, index }) => this.renderCell(row, column, index, cellAt(row, index)))}
              </tr>`,
            )}
          </tbody>
        </table>
      </div>
      ${info.pageCount > 1 ? this.renderPager(info.page, info.pageCount, info.start, info.end, sorted.length) : nothing}
    `;
  }

  private isShown(column: DataColumn): boolean {
    const id = column.id ?? '';
    return this.shownByUser.get(id) ?? (this.columns.length === 0 || this.columns.includes(id));
  }

  private renderCell(row: DataRow, column: DataColumn, index: number, cell: ReturnType<typeof cellAt>) {
    const isNull = cell === null || cell.v === null || cell.v === undefined;
    const text = isNull && !cell?.f ? '—' : formatCell(cell, column);
    // A name column shows the whole name on one line, as wide as the table's free width allows;
    // the browser cuts it with an ellipsis only when it does not fit (full name on hover).
    const isName = this.shortColumns.includes(column.id ?? '') && !isNull;
    const classes = `${isNumeric(column) ? 'number' : ''} ${isNull ? 'null' : ''} ${isName ? 'name' : ''}`;
    const href = isNull ? null : (this.cellLink?.(row, column) ?? null);
    const content = href ? html`<a href=${href} @click=${(e: MouseEvent) => this.onLink(e, row, column)}>${text}</a>` : text;
    const unit = typeof cell?.v === 'number' ? columnUnit(column) : null;
    const tooltip = unit ? rawWithUnit(cell!.v as number, unit) : isName ? text : null;
    return html`<td class=${classes} title=${tooltip ?? nothing} data-column=${isName ? index : nothing}>${content}</td>`;
  }

  /** A menu of the columns when some start hidden. */
  private renderColumnMenu(columns: readonly DataColumn[]) {
    if (this.columns.length === 0) return nothing;
    const hidden = columns.filter((column) => !this.isShown(column)).length;
    return html`<details class="columns">
      <summary>Columns${hidden ? ` (${hidden} hidden)` : ''}</summary>
      <fieldset>
        <legend class="visually-hidden">Columns shown</legend>
        ${columns.map(
          (column, index) => html`<label
            ><input type="checkbox" .checked=${this.isShown(column)} @change=${(e: Event) => this.onColumn(column, e)} />
            ${columnLabel(column, index)}</label
          >`,
        )}
      </fieldset>
    </details>`;
  }

  private onColumn(column: DataColumn, event: Event): void {
    const next = new Map(this.shownByUser);
    next.set(column.id ?? '', (event.target as HTMLInputElement).checked);
    this.shownByUser = next;
  }

  private onLink(event: MouseEvent, row: DataRow, column: DataColumn): void {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
    event.preventDefault();
    this.dispatchEvent(new CustomEvent('pf-cell-link', { detail: { row, column }, bubbles: true, composed: true }));
  }

  private renderHeader(column: DataColumn, index: number) {
    const sorted = this.sort?.column === index ? this.sort.direction : null;
    const ariaSort = sorted === 'asc' ? 'ascending' : sorted === 'desc' ? 'descending' : 'none';
    // Values of a column with a unit show their own units: the header drops "(us)" (kept in the tooltip).
    const label = labelWithoutUnit(this.labels[column.id ?? ''] ?? columnLabel(column, index), column);
    // The whole cell sorts (the button inside is for the keyboard; its click bubbles here).
    return html`<th class=${isNumeric(column) ? 'number' : ''} aria-sort=${ariaSort} scope="col" @click=${() => this.onSort(index)}>
      <button type="button" title=${columnLabel(column, index)}>
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

  private exportCsv(table: DataTable): void {
    const blob = new Blob([tableToCsv(table)], { type: 'text/csv;charset=utf-8' });
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

/**
 * The name columns split the table's free width in proportion to their longest name on the page
 * (an empty "Op name" column does not take half of it from the kernel names).
 */
function nameShares(
  shown: readonly { column: DataColumn; index: number }[],
  rows: readonly DataRow[],
  names: readonly string[],
): Map<number, string> {
  const longest = new Map<number, number>();
  for (const { column, index } of shown) {
    if (!names.includes(column.id ?? '')) continue;
    let chars = 8;
    for (const row of rows) chars = Math.max(chars, formatCell(cellAt(row, index), column).length);
    longest.set(index, chars);
  }
  const total = [...longest.values()].reduce((a, b) => a + b, 0);
  return new Map([...longest].map(([index, chars]) => [index, `${Math.round((100 * chars) / total)}%`]));
}

function isNumeric(column: DataColumn): boolean {
  return column.type === 'number';
}

declare global {
  interface HTMLElementTagNameMap {
    'pf-data-table': DataTableElement;
  }
}
