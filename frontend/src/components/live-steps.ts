/**
 * `<pf-live-steps>`: on the live page, the steps the training process ran (`GET live_steps`,
 * polled) and a "Capture next step" button (`POST live_capture_step`): the next step is traced
 * and saved as a session, whose name the list then shows; clicking it fires `pf-select-run`.
 */
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { ApiError, type ProfileApi } from '../api';
import { formatStepMs, liveStepsModel, type LiveStepsModel, type LiveStepsReply } from '../models/live-steps';
import { controlStyles } from './shared-styles';

const POLL_MS = 2000;
const POLL_BUSY_MS = 400;

@customElement('pf-live-steps')
export class LiveSteps extends LitElement {
  @property({ attribute: false }) api!: ProfileApi;
  @state() private model: LiveStepsModel | null = null;
  @state() private error = '';
  private timer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;

  static override styles = [
    controlStyles,
    css`
      :host {
        display: block;
        margin: 8px 0 12px;
      }
      details {
        border: 1px solid var(--pf-border);
        background: var(--pf-surface);
        border-radius: var(--pf-radius);
        padding: 6px 12px;
      }
      summary {
        cursor: pointer;
        font-weight: 600;
      }
      .bar {
        display: flex;
        flex-wrap: wrap;
        align-items: center;
        gap: 12px;
        margin: 8px 0;
      }
      .muted {
        color: var(--pf-muted);
      }
      table {
        border-collapse: collapse;
        font-variant-numeric: tabular-nums;
      }
      th,
      td {
        text-align: right;
        padding: 2px 12px 2px 0;
      }
      th:last-child,
      td:last-child {
        text-align: left;
      }
      button.link {
        border: none;
        background: none;
        color: var(--pf-link);
        padding: 0;
        min-height: 0;
        text-decoration: underline;
      }
    `,
  ];

  override connectedCallback(): void {
    super.connectedCallback();
    this.stopped = false;
    void this.poll();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private async poll(): Promise<void> {
    clearTimeout(this.timer);
    try {
      this.show(await this.api.getJson<LiveStepsReply>('live_steps'));
    } catch (e) {
      this.error = e instanceof ApiError ? e.message : String(e);
    }
    if (!this.stopped) {
      this.timer = setTimeout(() => void this.poll(), this.model?.captureBusy ? POLL_BUSY_MS : POLL_MS);
    }
  }

  private show(reply: LiveStepsReply): void {
    const before = this.model?.captureBusy;
    this.model = liveStepsModel(reply);
    this.error = '';
    if (before && !this.model.captureBusy) {
      this.dispatchEvent(new CustomEvent('pf-step-captured', { bubbles: true, composed: true }));
    }
  }

  private async captureNext(): Promise<void> {
    try {
      this.show(await this.api.postJson<LiveStepsReply>('live_capture_step'));
    } catch (e) {
      this.error = e instanceof ApiError ? e.message : String(e);
    }
    void this.poll();
  }

  private select(session: string): void {
    this.dispatchEvent(new CustomEvent('pf-select-run', { detail: { run: session }, bubbles: true, composed: true }));
  }

  override render() {
    const m = this.model;
    return html`<details open>
      <summary>Steps of this process</summary>
      <div class="bar">
        <span class="muted summary-line">${m ? m.summary : 'Loading…'}</span>
        <button type="button" class="primary capture-step" ?disabled=${!m || m.captureBusy} @click=${() => void this.captureNext()}>
          Capture next step
        </button>
        ${m?.captureText ? html`<span class="capture-state" role="status">${m.captureText}</span>` : nothing}
        ${m?.capturedSession
          ? html`<button type="button" class="open-captured" @click=${() => this.select(m.capturedSession!)}>
              Open it
            </button>`
          : nothing}
        ${this.error ? html`<span class="error" role="alert">${this.error}</span>` : nothing}
      </div>
      ${m && m.rows.length
        ? html`<table>
            <thead><tr><th>Step</th><th>Time (ms)</th><th>Session</th></tr></thead>
            <tbody>
              ${m.rows.map(
                (r) => html`<tr>
                  <td>${r.step}</td>
                  <td>${formatStepMs(r.durationMs)}</td>
                  <td>${r.session
                    ? html`<button type="button" class="link session" @click=${() => this.select(r.session!)}>${r.session}</button>`
                    : nothing}</td>
                </tr>`,
              )}
            </tbody>
          </table>`
        : nothing}
    </details>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'pf-live-steps': LiveSteps;
  }
}
