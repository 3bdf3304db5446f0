/**
 * The Summary tab of the trace viewer (trace-view.ts) for `trace_viewer` / `trace_viewer@`: counts,
 * a table of processes and threads, and the event names with the largest total duration.
 * Loaded only when the tab is opened, since it reads the whole Chrome trace.
 */
import { LitElement, css, html } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import '../charts/bar-chart';
import '../components/data-table';
import { controlStyles } from '../components/shared-styles';
import type { DataTable } from '../table/datatable';
import { formatNumber } from '../format';
import { isTracePayload, summarizeTrace, type TraceSummary } from '../trace/summary';
import type { ToolContext, ToolViewElement } from './contract';
import './trace-raw-links';

export const TRACE_SUMMARY_VIEW_TAG = 'pf-trace-summary-view';

export function threadTable(summary: TraceSummary): DataTable {
  return {
    cols: [
      { id: 'pid', label: 'Process id', type: 'string' },
      { id: 'process', label: 'Process', type: 'string' },
      { id: 'tid', label: 'Thread id', type: 'string' },
      { id: 'thread', label: 'Thread', type: 'string' },
      { id: 'events', label: 'Events', type: 'number' },
    ],
    rows: summary.threads.map((t) => ({
      c: [{ v: t.pid }, { v: t.processName }, { v: t.tid }, { v: t.threadName }, { v: t.eventCount }],
    })),
  };
}

export function topEventTable(summary: TraceSummary): DataTable {
  return {
    cols: [
      { id: 'name', label: 'Event name', type: 'string' },
      { id: 'count', label: 'Occurrences', type: 'number' },
      { id: 'total_ms', label: 'Total duration (ms)', type: 'number' },
      { id: 'avg_us', label: 'Average duration (µs)', type: 'number' },
      { id: 'max_us', label: 'Max duration (µs)', type: 'number' },
    ],
    rows: summary.topEvents.map((e) => ({
      c: [
        { v: e.name },
        { v: e.count },
        { v: e.totalDurationUs / 1000 },
        { v: e.count ? e.totalDurationUs / e.count : 0 },
        { v: e.maxDurationUs },
      ],
    })),
  };
}

@customElement(TRACE_SUMMARY_VIEW_TAG)
export class TraceSummaryView extends LitElement implements ToolViewElement {
  @property({ attribute: false }) context!: ToolContext;
  @property({ attribute: false }) data: unknown;

  static override styles = [
    controlStyles,
    css`
      :host {
        display: block;
      }
      .stats {
        display: flex;
        flex-wrap: wrap;
        gap: 12px;
        margin: 8px 0 16px;
        padding: 0;
        list-style: none;
      }
      .stats li {
        background: var(--pf-surface);
        border: 1px solid var(--pf-border);
        border-radius: var(--pf-radius);
        padding: 8px 14px;
      }
      .stats strong {
        display: block;
        font-size: 1.3rem;
      }
      h2 {
        font-size: 1.05rem;
        margin: 20px 0 6px;
      }
      .note {
        color: var(--pf-muted);
      }
    `,
  ];

  override render() {
    const events = isTracePayload(this.data) ? this.data.traceEvents : [];
    const summary = summarizeTrace(events);
    const { api, run, host } = this.context;
    return html`
      <p class="note">
        A summary of the whole trace.
        <pf-trace-raw-links .api=${api} .run=${run} .host=${host}></pf-trace-raw-links>
      </p>
      <ul class="stats" aria-label="Trace summary">
        <li><strong>${summary.processCount}</strong> processes</li>
        <li><strong>${summary.threadCount}</strong> threads</li>
        <li><strong>${summary.eventCount}</strong> events</li>
        <li><strong>${formatNumber(summary.spanUs / 1000)}</strong> ms span</li>
      </ul>
      <h2>Top events by total duration</h2>
      ${summary.topEvents.length
        ? html`<pf-bar-chart
            label="Top events by total duration"
            unit="ms"
            .bars=${summary.topEvents.slice(0, 10).map((e) => ({ label: e.name, value: e.totalDurationUs / 1000 }))}
          ></pf-bar-chart>`
        : html`<p class="note">No complete (X) events in this trace.</p>`}
      <pf-data-table .table=${topEventTable(summary)} caption="Top events by total duration"></pf-data-table>
      <h2>Processes and threads</h2>
      <pf-data-table .table=${threadTable(summary)} caption="Processes and threads"></pf-data-table>
    `;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'pf-trace-summary-view': TraceSummaryView;
  }
}
