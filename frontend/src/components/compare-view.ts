/**
 * `<pf-compare-view>`: the selected tool of the selected run (the experiment) against a baseline
 * run, as the server compares them (`data?base_run=`, docs/compare.md): the summary line on top,
 * then the comparison table, sortable by any delta, with Export as CSV (`data_csv?base_run=`).
 * The baseline is compared on the experiment's host when it has a host of that name, else on all.
 * A tool the server cannot compare shows its message, which names the tools that can.
 */
import { LitElement, css, html } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { ApiError, isAbortError } from '../api';
import { compareColumns, compareLabels, compareSummary } from '../compare';
import { toolLabel } from '../state';
import { isDataTable, type DataTable } from '../table/datatable';
import type { ToolContext } from '../views/contract';
import './data-table';
import './loading-skeleton';
import './message-card';

type Phase =
  | { kind: 'loading' }
  | { kind: 'ready'; table: DataTable }
  | { kind: 'error'; code: string; message: string; info: boolean };

@customElement('pf-compare-view')
export class CompareView extends LitElement {
  @property({ attribute: false }) context: ToolContext | null = null;
  @property({ attribute: false }) baseRun = '';
  @state() private phase: Phase = { kind: 'loading' };
  private abort: AbortController | null = null;

  static override styles = css`
    :host {
      display: block;
    }
    .summary {
      margin: 12px 0;
      padding: 10px 12px;
      border: 1px solid var(--pf-border);
      border-radius: 6px;
      background: var(--pf-surface);
    }
    .sides {
      color: var(--pf-muted);
      font-size: 0.85rem;
    }
  `;

  override willUpdate(changed: Map<PropertyKey, unknown>): void {
    if (changed.has('context') || changed.has('baseRun')) void this.load();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.abort?.abort();
  }

  /** The baseline's host: the experiment's host name when the baseline has it, else all. */
  private baseHost = '';

  private params() {
    const c = this.context!;
    return { run: c.run, tag: c.tool, host: c.host || undefined, base_run: this.baseRun, base_host: this.baseHost || undefined };
  }

  private async load(): Promise<void> {
    this.abort?.abort();
    if (!this.context || !this.baseRun) return;
    const abort = new AbortController();
    this.abort = abort;
    this.phase = { kind: 'loading' };
    try {
      const { api, tool, host } = this.context;
      const baseHosts = host ? await api.hosts(this.baseRun, tool, abort.signal) : [];
      this.baseHost = baseHosts.includes(host) ? host : '';
      const data = await api.getJson<unknown>('data', this.params(), abort.signal);
      if (abort.signal.aborted) return;
      if (!isDataTable(data)) throw new ApiError(0, 'BAD_ANSWER', 'The server answered no comparison table.');
      this.phase = { kind: 'ready', table: data };
    } catch (error) {
      if (abort.signal.aborted || isAbortError(error)) return;
      const known = error instanceof ApiError;
      this.phase = {
        kind: 'error',
        code: known ? `${error.status || ''} ${error.code}`.trim() : 'CLIENT_ERROR',
        message: known ? error.message : 'The page could not show this comparison.',
        info: known && (error.status === 400 || error.notApplicable),
      };
    }
  }

  override render() {
    const phase = this.phase;
    const tool = toolLabel(this.context?.tool ?? '');
    const sides = html`<div class="sides">${tool}: baseline <b>${this.baseRun}</b> → experiment <b>${this.context?.run}</b></div>`;
    switch (phase.kind) {
      case 'loading':
        return html`${sides}<pf-skeleton label="Comparing ${tool}"></pf-skeleton>`;
      case 'error':
        return html`${sides}<pf-message
            kind=${phase.info ? 'info' : 'error'}
            heading=${phase.info ? `${tool} cannot be compared here` : `Could not compare ${tool}`}
            .code=${phase.code}
            .message=${phase.message}
          ></pf-message>`;
      case 'ready': {
        const table = phase.table;
        const csv = this.context!.api.url('data_csv', this.params());
        return html`<div class="summary" role="status">${sides}<div>${compareSummary(table)}</div></div>
          <pf-data-table
            caption="Comparison of ${tool}"
            .table=${table}
            .columns=${compareColumns(table)}
            .labels=${compareLabels(table)}
            .shortColumns=${(table.p?.keys as string[] | undefined) ?? []}
            csv-href=${csv}
          ></pf-data-table>`;
      }
    }
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'pf-compare-view': CompareView;
  }
}
