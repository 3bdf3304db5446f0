/**
 * `<pf-trace-details>`: the selected event — name, start, duration, arguments, the events its
 * flows lead to and come from (each a button that jumps there), and "show in TF stats".
 * Fires `pf-trace-jump` {event} and `pf-trace-op-stats` {name}; all text goes through bindings.
 */
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import { controlStyles } from '../components/shared-styles';
import type { FlowEventRef } from '../trace/contract';
import { formatDuration } from '../format';
import type { EventSelection } from '../trace/timeline-model';

export const TRACE_DETAILS_TAG = 'pf-trace-details';

/** An argument value as text: strings as they are, anything else as JSON. */
export function argText(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

@customElement(TRACE_DETAILS_TAG)
export class TraceDetails extends LitElement {
  @property({ attribute: false }) selection!: EventSelection;
  @property({ type: Number }) originMs = 0;
  /** The op statistics tool of this run, '' when it has none. */
  @property() opStatsTool = '';

  static override styles = [
    controlStyles,
    css`
      :host {
        display: block;
        background: var(--pf-surface);
        border: 1px solid var(--pf-border);
        border-radius: var(--pf-radius);
        padding: 8px 14px 12px;
      }
      h3 {
        margin: 4px 0 8px;
        font-size: 1.05rem;
        word-break: break-all;
      }
      table {
        border-collapse: collapse;
        width: 100%;
      }
      th {
        text-align: left;
        font-weight: 600;
        padding: 2px 12px 2px 0;
        white-space: nowrap;
        vertical-align: top;
        width: 1%;
      }
      td {
        padding: 2px 0;
        word-break: break-all;
        font-family: var(--pf-mono);
        font-size: 0.92em;
      }
      h4 {
        margin: 12px 0 4px;
      }
      ul {
        margin: 0;
        padding-left: 18px;
      }
      button.link {
        border: none;
        background: none;
        padding: 0;
        min-height: 0;
        color: var(--pf-link);
        text-decoration: underline;
        cursor: pointer;
      }
      .muted {
        color: var(--pf-muted);
      }
      .error {
        color: var(--pf-error-text);
      }
    `,
  ];

  override render() {
    const s = this.selection;
    const d = s.details;
    const name = d?.name ?? s.name;
    return html`
      <h3 class="event-name">${name || `Event ${s.event}`}</h3>
      ${s.error ? html`<p class="error">${s.error}</p>` : nothing}
      ${!d && !s.error ? html`<p class="muted">Loading details…</p>` : nothing}
      <table class="facts">
        <tr>
          <th scope="row">Start</th>
          <td>${(s.startMs - this.originMs).toFixed(6)} ms <span class="muted">from the trace start (ts ${(s.startMs * 1000).toFixed(3)} µs)</span></td>
        </tr>
        <tr><th scope="row">Duration</th><td>${formatDuration(s.endMs - s.startMs)}</td></tr>
        ${d ? html`<tr><th scope="row">Row</th><td>pid ${d.pid}, tid ${d.tid}, depth ${d.depth}</td></tr>` : nothing}
      </table>
      ${this.opStatsTool && name
        ? html`<p>
            <button type="button" class="link op-stats" @click=${() => this.fire('pf-trace-op-stats', { name })}>Show in TF stats</button>
          </p>`
        : nothing}
      ${d && Object.keys(d.args ?? {}).length
        ? html`<h4>Arguments</h4>
            <table class="args">
              ${Object.entries(d.args).map(([key, value]) => html`<tr><th scope="row">${key}</th><td>${argText(value)}</td></tr>`)}
            </table>`
        : nothing}
      ${d?.flows?.length ? this.renderFlows(d.flows, s.event) : nothing}
    `;
  }

  private renderFlows(flows: NonNullable<EventSelection['details']>['flows'], self: number) {
    return html`<h4>Flows</h4>
      <ul class="flows">
        ${flows.map(
          (flow) => html`<li>
            ${flow.direction === 'in' ? 'from' : flow.direction === 'out' ? 'to' : flow.direction}
            ${flow.cat ? html`<span class="muted">(${flow.cat})</span>` : nothing}:
            ${flow.events.filter((e) => e.event !== self).map((e) => this.flowLink(e))}
            ${flow.num_events && flow.num_events > flow.events.length
              ? html`<span class="muted">(${flow.num_events} events, first ${flow.events.length} listed)</span>`
              : nothing}
          </li>`,
        )}
      </ul>`;
  }

  private flowLink(e: FlowEventRef) {
    return html`<button type="button" class="link flow-link" @click=${() => this.fire('pf-trace-jump', { event: e.event })}>
        ${e.name} @ ${formatDuration(e.ts / 1000 - this.originMs)}
      </button>
      `;
  }

  private fire<T>(type: string, detail: T): void {
    this.dispatchEvent(new CustomEvent<T>(type, { detail, bubbles: true, composed: true }));
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'pf-trace-details': TraceDetails;
  }
}
