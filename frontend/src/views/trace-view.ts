/**
 * `<pf-trace-view>`: the trace viewer for `trace_viewer` and `trace_viewer@`. A Timeline tab
 * (the canvas timeline over the backend's window/search/details answers, with search, event
 * details, range statistics and a keyboard help overlay) and a Summary tab (the summary of the
 * whole Chrome trace). `trace_viewer@` opens on the timeline, `trace_viewer` (the complete
 * trace) on the summary; each tab loads its data only when first opened. The window, the
 * selected event and a non-default tab live in the URL (`start_ms`, `end_ms`, `event`,
 * `trace_tab`), rewritten in place while the view moves.
 */
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';
import { ApiError, isAbortError } from '../api';
import '../components/loading-skeleton';
import '../components/message-card';
import { controlStyles } from '../components/shared-styles';
import { toolLabel } from '../state';
import { KEY_HELP } from '../trace/keys';
import { apiTraceSource } from '../trace/source';
import { formatDuration } from '../format';
import { TimelineModel } from '../trace/timeline-model';
import { defaultTab, initialTab, readTraceUrl, writeTraceUrl, type TraceTab as Tab } from '../trace/url-state';
import { NAVIGATE_EVENT, type NavigateDetail, type ToolContext, type ToolViewElement } from './contract';
import { runToolFor } from '../tools';
import './trace-details';
import './trace-timeline';
import './trace-host-note';
import type { TimelineKeyDetail, TraceTimeline } from './trace-timeline';

export const TRACE_VIEW_TAG = 'pf-trace-view';
/** URL parameter the op statistics view reads as its name filter ("show in TF stats"). */
export const OP_FILTER_PARAM = 'op_filter';
const URL_WRITE_DELAY_MS = 150;


@customElement(TRACE_VIEW_TAG)
export class TraceView extends LitElement implements ToolViewElement {
  @property({ attribute: false }) context!: ToolContext;
  @state() private tab: Tab = 'timeline';
  @state() private helpOpen = false;
  @state() private unavailable = '';
  @state() private startError: { code: string; message: string } | null = null;
  @state() private summary: { data?: unknown; error?: string } | null = null;
  @query('pf-trace-timeline') private timeline?: TraceTimeline;
  private model: TimelineModel | null = null;
  private urlTimer: ReturnType<typeof setTimeout> | null = null;
  private summaryAbort: AbortController | null = null;

  static override styles = [
    controlStyles,
    css`
      :host {
        display: block;
      }
      .tabs {
        display: flex;
        gap: 4px;
        border-bottom: 1px solid var(--pf-border);
        margin-bottom: 8px;
      }
      .tabs button {
        border: none;
        border-bottom: 2px solid transparent;
        border-radius: 0;
        background: none;
      }
      .tabs button[aria-selected='true'] {
        border-bottom-color: var(--pf-accent);
        font-weight: 600;
      }
      .toolbar {
        display: flex;
        flex-wrap: wrap;
        align-items: center;
        gap: 6px;
        margin-bottom: 6px;
      }
      .toolbar label.flows {
        display: inline-flex;
        flex-direction: row;
        align-items: center;
        gap: 4px;
        margin: 0 4px;
      }
      .toolbar label.flows input {
        margin: 0;
      }
      .toolbar input[type='search'] {
        width: 260px;
      }
      .status {
        color: var(--pf-muted);
        font-size: 0.9em;
        margin-left: auto;
      }
      .status.warn {
        color: var(--pf-error-text);
      }
      .panels {
        display: flex;
        flex-wrap: wrap;
        gap: 12px;
        margin-top: 10px;
      }
      .panels > * {
        flex: 1 1 420px;
        min-width: 0;
      }
      .help {
        position: absolute;
        inset: 40px 10% auto 10%;
        z-index: 3;
        background: var(--pf-surface);
        border: 1px solid var(--pf-border);
        border-radius: var(--pf-radius);
        padding: 12px 18px;
        box-shadow: 0 8px 30px rgb(0 0 0 / 25%);
      }
      .help table {
        border-collapse: collapse;
      }
      .help th {
        text-align: left;
        padding: 3px 18px 3px 0;
        white-space: nowrap;
        font-family: var(--pf-mono);
        font-weight: 600;
      }
      .stage {
        position: relative;
      }
      .muted {
        color: var(--pf-muted);
      }
    `,
  ];

  override connectedCallback(): void {
    super.connectedCallback();
    this.addEventListener('pf-trace-key', this.onTimelineKey as EventListener);
    this.tab = initialTab(this.context.tool, readTraceUrl(window.location.search).tab);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.model?.dispose();
    this.model = null;
    this.summaryAbort?.abort();
    if (this.urlTimer) clearTimeout(this.urlTimer);
    this.urlTimer = null;
  }

  override updated(): void {
    if (this.tab === 'summary' && !this.summary) void this.loadSummary();
    if (this.tab === 'timeline' && !this.model && !this.unavailable && !this.startError) this.startModel();
  }

  override render() {
    return html`
      <div class="tabs" role="tablist">
        ${this.tabButton('timeline', 'Timeline')} ${this.tabButton('summary', 'Summary')}
        <pf-trace-host-note .context=${this.context}></pf-trace-host-note>
      </div>
      ${this.tab === 'timeline' ? this.renderTimeline() : this.renderSummary()}
    `;
  }

  private tabButton(tab: Tab, label: string) {
    return html`<button type="button" role="tab" aria-selected=${this.tab === tab ? 'true' : 'false'} @click=${() => this.setTab(tab)}>
      ${label}
    </button>`;
  }

  private renderTimeline() {
    if (this.unavailable) {
      return html`<pf-message kind="info" heading="No timeline for this trace" .message=${this.unavailable}></pf-message>`;
    }
    if (this.startError) {
      return html`<pf-message kind="error" heading="Could not load the trace" .code=${this.startError.code} .message=${this.startError.message}></pf-message>`;
    }
    const m = this.model;
    if (!m) return nothing;
    return html`
      ${this.renderToolbar(m)}
      <div class="stage">
        ${m.phase === 'loading' ? html`<pf-skeleton label="Loading ${toolLabel(this.context.tool)}"></pf-skeleton>` : nothing}
        ${m.phase === 'empty' ? html`<pf-message kind="info" heading="Nothing to show" message="This trace has no events."></pf-message>` : nothing}
        <pf-trace-timeline .model=${m}></pf-trace-timeline>
        ${this.helpOpen ? this.renderHelp() : nothing}
      </div>
      <div class="panels">
        ${m.selection
          ? html`<pf-trace-details
              .selection=${m.selection}
              .originMs=${m.full?.startMs ?? 0}
              .opStatsTool=${this.opStatsTool()}
              @pf-trace-jump=${(e: CustomEvent<{ event: number }>) => void m.selectEvent(e.detail.event, { reveal: true })}
              @pf-trace-op-stats=${(e: CustomEvent<{ name: string }>) => this.showInOpStats(e.detail.name)}
            ></pf-trace-details>`
          : nothing}
        ${m.range ? this.renderRange(m) : nothing}
      </div>
    `;
  }

  private renderToolbar(m: TimelineModel) {
    const s = m.search;
    const matchText = m.searchBusy
      ? 'Searching…'
      : m.searchError
        ? m.searchError
        : s
          ? s.matches.length
            ? `${s.index + 1} of ${s.total}${s.truncated ? ` (first ${s.matches.length} listed)` : ''}`
            : 'No matches'
          : '';
    const { primary } = m.windows();
    const warn = !!primary?.truncated;
    const status = m.message || (primary ? primary.hint || `${primary.returned} items in view` : '');
    return html`<div class="toolbar">
      <input
        type="search"
        placeholder="Search events (Enter: next, Shift+Enter: previous)"
        aria-label="Search events"
        @keydown=${this.onSearchKey}
        @search=${(e: Event) => !(e.target as HTMLInputElement).value && m.clearSearch()}
      />
      <button type="button" title="Previous match (Shift+Enter)" aria-label="Previous match" ?disabled=${!s?.matches.length} @click=${() => m.step(-1)}>◀</button>
      <button type="button" title="Next match (Enter)" aria-label="Next match" ?disabled=${!s?.matches.length} @click=${() => m.step(1)}>▶</button>
      <span class="match-count muted" aria-live="polite">${matchText}</span>
      <button type="button" title="Fit the selection (F)" ?disabled=${!m.selection && !m.range} @click=${() => m.fit()}>Fit</button>
      <button type="button" title="Whole trace (0)" @click=${() => m.reset()}>Reset</button>
      <label class="flows" title="Flow arrows of every event in view; off: only the selected event's"
        ><input type="checkbox" .checked=${m.allFlows} @change=${(e: Event) => m.setAllFlows((e.target as HTMLInputElement).checked)} /> All flows</label
      >
      <button type="button" title="Keyboard shortcuts (?)" aria-label="Keyboard shortcuts" @click=${() => (this.helpOpen = !this.helpOpen)}>?</button>
      <span class="status ${warn ? 'warn' : ''}" aria-live="polite">${m.loader.loading ? 'Loading window… ' : ''}${status}</span>
    </div>`;
  }

  private renderHelp() {
    return html`<div class="help" role="dialog" aria-label="Keyboard shortcuts">
      <h3>Keyboard and mouse</h3>
      <table>
        ${KEY_HELP.map(([keys, what]) => html`<tr><th scope="row">${keys}</th><td>${what}</td></tr>`)}
      </table>
      <p><button type="button" @click=${() => (this.helpOpen = false)}>Close</button></p>
    </div>`;
  }

  private renderRange(m: TimelineModel) {
    const stats = m.rangeStats();
    const range = m.range!;
    return html`<section class="range-stats" aria-label="Range selection">
      <h3>
        Range ${formatDuration(range.endMs - range.startMs)}
        <button type="button" @click=${() => m.setRange(null)}>Clear</button>
      </h3>
      ${stats
        ? html`<p>
              <strong>${stats.count}</strong> events, ${stats.approximate ? '≈ ' : ''}${formatDuration(stats.totalMs)} in total,
              ${stats.names} names${range.tracks ? html`, ${range.tracks.size} rows` : nothing}
              ${stats.approximate ? html`<span class="muted">(includes merged boxes; zoom in for exact totals)</span>` : nothing}
            </p>
            <table class="top-names">
              <thead><tr><th>Name</th><th>Count</th><th>Total</th></tr></thead>
              <tbody>
                ${stats.byName.map((n) => html`<tr><td>${n.name}</td><td>${n.count}</td><td>${formatDuration(n.totalMs)}</td></tr>`)}
              </tbody>
            </table>`
        : html`<p class="muted">No loaded data covers this range yet.</p>`}
    </section>`;
  }

  private renderSummary() {
    const s = this.summary;
    if (!s || (!s.data && !s.error)) return html`<pf-skeleton label="Loading the trace summary"></pf-skeleton>`;
    if (s.error) return html`<pf-message kind="error" heading="Could not load the summary" .message=${s.error}></pf-message>`;
    return html`<pf-trace-summary-view .context=${this.context} .data=${s.data}></pf-trace-summary-view>`;
  }

  // ── behaviour ───────────────────────────────────────────────────────────────

  private startModel(): void {
    const { api, run, host } = this.context;
    const model = new TimelineModel(apiTraceSource(api, run, host));
    this.model = model;
    model.onChange = () => this.requestUpdate();
    model.onRedraw = () => this.timeline?.requestDraw();
    model.onViewChange = () => this.scheduleUrlWrite();
    // The first answer needs the canvas width: start once the timeline has measured itself.
    void this.updateComplete.then(() => this.startWhenSized(model));
  }

  private async startWhenSized(model: TimelineModel): Promise<void> {
    try {
      await this.timeline?.updateComplete;
      if (this.model !== model) return;
      await model.start(readTraceUrl(window.location.search));
    } catch (error) {
      if (this.model !== model || isAbortError(error)) return;
      if (error instanceof ApiError && (error.status === 404 || error.notApplicable)) {
        this.unavailable = error.notApplicable ? error.message : 'This server does not answer trace_viewer@ window queries; the Summary tab shows the whole trace.';
        if (!error.notApplicable) this.setTab('summary');
      } else {
        this.startError = error instanceof ApiError ? { code: error.code, message: error.message } : { code: 'CLIENT_ERROR', message: 'The trace could not be shown.' };
      }
    }
  }

  private setTab(tab: Tab): void {
    this.tab = tab;
    this.writeUrl();
    if (tab === 'timeline') void this.updateComplete.then(() => this.timeline?.requestDraw());
  }

  private async loadSummary(): Promise<void> {
    this.summary = {};
    const abort = new AbortController();
    this.summaryAbort = abort;
    try {
      const [data] = await Promise.all([
        this.context.api.toolData(this.context.run, this.context.tool, this.context.host, abort.signal),
        import('./trace-summary-view'),
      ]);
      if (!abort.signal.aborted) this.summary = { data };
    } catch (error) {
      if (abort.signal.aborted || isAbortError(error)) return;
      this.summary = { error: error instanceof Error ? error.message : 'The summary could not be loaded.' };
    }
  }

  private readonly onSearchKey = (event: KeyboardEvent) => {
    if (event.key === 'Enter') {
      event.preventDefault();
      void this.model?.searchOrStep((event.target as HTMLInputElement).value, event.shiftKey ? -1 : 1);
    } else if (event.key === 'Escape') {
      (event.target as HTMLInputElement).blur();
      this.timeline?.focusCanvas();
    }
  };

  private readonly onTimelineKey = (event: CustomEvent<TimelineKeyDetail>) => {
    if (event.detail.action === 'help') this.helpOpen = !this.helpOpen;
    else if (this.helpOpen) this.helpOpen = false;
    else if (this.model?.range) this.model.setRange(null);
    else this.model?.clearSelection();
  };

  private opStatsTool(): string {
    return runToolFor('framework_op_stats', this.context.tools ?? []) ?? '';
  }

  /** Switches to the op statistics tool with the op name as its filter (kept in the URL). */
  private showInOpStats(name: string): void {
    const tool = this.opStatsTool();
    if (!tool) return;
    const { pathname, search, hash } = window.location;
    const params = new URLSearchParams(writeTraceUrl(search, {}));
    params.set(OP_FILTER_PARAM, name);
    window.history.replaceState(window.history.state, '', `${pathname}?${params}${hash}`);
    this.dispatchEvent(new CustomEvent<NavigateDetail>(NAVIGATE_EVENT, { detail: { tool }, bubbles: true, composed: true }));
  }

  private scheduleUrlWrite(): void {
    if (this.urlTimer) return;
    this.urlTimer = setTimeout(() => {
      this.urlTimer = null;
      this.writeUrl();
    }, URL_WRITE_DELAY_MS);
  }

  /** Mirrors the window, the selected event and the tab in the URL, without a history entry. */
  private writeUrl(): void {
    if (!this.isConnected) return;
    const m = this.model;
    const { pathname, search, hash } = window.location;
    const next = writeTraceUrl(search, {
      ...(m?.full ? { startMs: m.span.startMs, endMs: m.span.endMs } : readTraceUrl(search)),
      event: m?.selection?.event,
      tab: this.tab !== defaultTab(this.context.tool) ? this.tab : undefined,
    });
    if (next !== search) window.history.replaceState(window.history.state, '', pathname + next + hash);
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'pf-trace-view': TraceView;
  }
}
