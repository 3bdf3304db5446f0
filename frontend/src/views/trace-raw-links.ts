/**
 * `<pf-trace-raw-links>`: the whole trace, outside the viewer (issue 28 item 10). "Open raw JSON…"
 * first asks the server what the trace weighs (`size=estimate`: events, bytes, gzip bytes) and
 * opens it only when the user confirms; the JSON then travels gzip-encoded. "Download .json.gz"
 * saves the Chrome trace-event file that ui.perfetto.dev and chrome://tracing open.
 */
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import type { ProfileApi } from '../api';
import { controlStyles } from '../components/shared-styles';
import { formatBytes } from '../format';

export const TRACE_RAW_LINKS_TAG = 'pf-trace-raw-links';

/** The server's `size=estimate` answer for the trace_viewer tool. */
export interface TraceSizeEstimate {
  events: number;
  bytes: number;
  gzipBytes: number;
  exact: boolean;
}

export function isTraceSizeEstimate(value: unknown): value is TraceSizeEstimate {
  const v = value as TraceSizeEstimate;
  return !!v && typeof v === 'object' && [v.events, v.bytes, v.gzipBytes].every((n) => typeof n === 'number');
}

/** "about 6.20 MiB (0.64 MiB sent compressed), 34023 events" — what the user is asked about. */
export function sizeSentence(estimate: TraceSizeEstimate): string {
  const about = estimate.exact ? '' : 'about ';
  return (
    `The raw trace is ${about}${formatBytes(estimate.bytes)} of JSON ` +
    `(${about}${formatBytes(estimate.gzipBytes)} sent compressed), ${estimate.events} events.`
  );
}

@customElement(TRACE_RAW_LINKS_TAG)
export class TraceRawLinks extends LitElement {
  @property({ attribute: false }) api!: ProfileApi;
  @property() run = '';
  @property() host = '';
  @state() private estimate: TraceSizeEstimate | null = null;
  @state() private asking = false;
  @state() private error = '';

  static override styles = [
    controlStyles,
    css`
      :host {
        display: inline;
      }
      .confirm {
        display: block;
        margin: 6px 0;
        padding: 8px 12px;
        border: 1px solid var(--pf-border);
        border-radius: var(--pf-radius);
        background: var(--pf-surface);
      }
      .confirm a,
      .confirm button {
        margin-left: 8px;
      }
    `,
  ];

  private params() {
    return { run: this.run, tag: 'trace_viewer', host: this.host || undefined };
  }

  private async ask(event: Event): Promise<void> {
    event.preventDefault();
    this.asking = true;
    this.error = '';
    try {
      const answer = await this.api.getJson<unknown>('data', { ...this.params(), size: 'estimate' });
      if (!isTraceSizeEstimate(answer)) throw new Error('The server did not say how large the trace is.');
      this.estimate = answer;
    } catch (error) {
      this.error = `${(error as Error).message} Download the .json.gz instead, or try again.`;
      this.asking = false;
    }
  }

  private cancel(): void {
    this.asking = false;
    this.estimate = null;
  }

  override render() {
    const download = this.api.url('trace_download', { run: this.run, host: this.host || undefined });
    const raw = this.api.url('data', this.params());
    return html`<a href=${raw} class="open-raw" @click=${this.ask}>Open raw JSON…</a>
      · <a href=${download} class="download-trace" download title="Chrome trace-event JSON, gzip-compressed: open it in ui.perfetto.dev or chrome://tracing"
        >Download .json.gz</a
      >
      ${this.asking && !this.estimate ? html`<span class="muted">Measuring the trace…</span>` : nothing}
      ${this.error ? html`<span class="confirm" role="alert">${this.error}</span>` : nothing}
      ${this.estimate
        ? html`<span class="confirm" role="dialog" aria-label="Open the raw trace?">
            ${sizeSentence(this.estimate)} Open it in a new tab?
            <a href=${raw} target="_blank" rel="noopener" class="open-raw-confirmed" @click=${this.cancel}>Open</a>
            <button type="button" @click=${this.cancel}>Cancel</button>
          </span>`
        : nothing}`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'pf-trace-raw-links': TraceRawLinks;
  }
}
