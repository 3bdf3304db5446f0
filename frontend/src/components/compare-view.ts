/**
 * `<pf-compare-view>`: the selected tool of the selected run (the experiment) against a baseline
 * run, as the server compares them (`data?base_run=`, docs/compare.md): the summary line on top,
 * then the comparison table, sortable by any delta, with Export as CSV (`data_csv?base_run=`).
 * A compare bar on top picks the baseline's host when the baseline has several ("Baseline
 * host": by default the experiment's host name when the baseline has it, else its first host
 * when the experiment shows one host, else all) and, for the PyTorch operators, the scope
 * (every thread, or the step thread inside the steps as torch-tb-profiler's diff counted).
 * Both are kept in the URL (`base_host`, `scope`). A tool the server cannot compare shows its
 * message, which names the tools that can.
 */
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { ApiError, isAbortError } from '../api';
import { SCOPED_TOOLS, SCOPE_OPTIONS, baseHostOptions, compareColumns, compareLabels, compareSummary } from '../compare';
import { toolLabel } from '../state';
import { isDataTable, type DataTable } from '../table/datatable';
import type { ToolContext } from '../views/contract';
import './data-table';
import './loading-skeleton';
import './message-card';
import './select-field';

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
    .bar {
      display: flex;
      flex-wrap: wrap;
      gap: 12px;
      align-items: flex-end;
      margin-bottom: 4px;
    }
  `;

  override willUpdate(changed: Map<PropertyKey, unknown>): void {
    if (changed.has('context') || changed.has('baseRun')) void this.load();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.abort?.abort();
  }

  /** The baseline run's hosts for this tool (the picker shows when there are several). */
  @state() private baseHosts: string[] = [];
  /** The baseline's host: '' is all of them. */
  @state() private baseHost = '';
  /** The user's pick (from the URL or the picker), kept while the baseline run stays. */
  private chosenBaseHost: string | null = urlParam('base_host');
  private hostsOf = '';
  @state() private scope = urlParam('scope') || 'all';

  private scoped(): boolean {
    return SCOPED_TOOLS.includes(this.context?.tool ?? '');
  }

  private params() {
    const c = this.context!;
    return {
      run: c.run,
      tag: c.tool,
      host: c.host || undefined,
      base_run: this.baseRun,
      base_host: this.baseHost || undefined,
      scope: this.scoped() && this.scope !== 'all' ? this.scope : undefined,
    };
  }

  private pickBaseHost(host: string): void {
    this.chosenBaseHost = host;
    setUrlParam('base_host', host);
    void this.load();
  }

  private pickScope(scope: string): void {
    this.scope = scope;
    setUrlParam('scope', scope === 'all' ? '' : scope);
    void this.load();
  }

  private async load(): Promise<void> {
    this.abort?.abort();
    if (!this.context || !this.baseRun) return;
    const abort = new AbortController();
    this.abort = abort;
    this.phase = { kind: 'loading' };
    try {
      const { api, tool, host } = this.context;
      const baseHosts = await api.hosts(this.baseRun, tool, abort.signal);
      if (this.hostsOf && this.hostsOf !== this.baseRun) {
        this.chosenBaseHost = null; // another baseline: its own default
        setUrlParam('base_host', '');
      }
      this.hostsOf = this.baseRun;
      this.baseHosts = baseHosts;
      const chosen = this.chosenBaseHost;
      if (chosen !== null && (chosen === '' || baseHosts.includes(chosen))) this.baseHost = chosen;
      else if (baseHosts.includes(host)) this.baseHost = host;
      else this.baseHost = host && baseHosts.length > 1 ? baseHosts[0]! : '';
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
    const bar = this.renderBar();
    switch (phase.kind) {
      case 'loading':
        return html`${bar}${sides}<pf-skeleton label="Comparing ${tool}"></pf-skeleton>`;
      case 'error':
        return html`${bar}${sides}<pf-message
            kind=${phase.info ? 'info' : 'error'}
            heading=${phase.info ? `${tool} cannot be compared here` : `Could not compare ${tool}`}
            .code=${phase.code}
            .message=${phase.message}
          ></pf-message>`;
      case 'ready': {
        const table = phase.table;
        const csv = this.context!.api.url('data_csv', this.params());
        return html`${bar}<div class="summary" role="status">${sides}<div>${compareSummary(table)}</div></div>
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

  /** The compare bar: the baseline host (several hosts only) and the scope (scoped tools). */
  private renderBar() {
    const hosts = this.baseHosts.length > 1;
    if (!hosts && !this.scoped()) return nothing;
    return html`<div class="bar">
      ${hosts
        ? html`<pf-select-field
            label="Baseline host"
            title="The baseline run's host to compare with (or all of them, merged as the tool merges)"
            .value=${this.baseHost}
            .options=${baseHostOptions(this.baseHosts)}
            @pf-select=${(e: CustomEvent<{ value: string }>) => this.pickBaseHost(e.detail.value)}
          ></pf-select-field>`
        : nothing}
      ${this.scoped()
        ? html`<pf-select-field
            label="Scope"
            title="Which operator calls count on both sides (docs/compare.md)"
            .value=${this.scope}
            .options=${SCOPE_OPTIONS}
            @pf-select=${(e: CustomEvent<{ value: string }>) => this.pickScope(e.detail.value)}
          ></pf-select-field>`
        : nothing}
    </div>`;
  }
}

function urlParam(name: string): string | null {
  return new URLSearchParams(window.location.search).get(name);
}

/** Writes one parameter into the address ('' removes it), the others kept. */
function setUrlParam(name: string, value: string): void {
  const { pathname, search, hash } = window.location;
  const params = new URLSearchParams(search);
  if (value) params.set(name, value);
  else params.delete(name);
  const text = params.toString();
  window.history.replaceState(window.history.state, '', pathname + (text ? '?' + text : '') + hash);
}

declare global {
  interface HTMLElementTagNameMap {
    'pf-compare-view': CompareView;
  }
}
