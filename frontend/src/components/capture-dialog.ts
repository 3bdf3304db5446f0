/**
 * The Capture Profile dialog (docs/capture.md), a native modal <dialog> (focus trap and Esc for free).
 * It starts the capture with `async=1` and polls `capture_status`: a countdown to the server's
 * expected end, then the phase (collecting, writing). A backend without async capture answers
 * the first request when done; the dialog then only counts down from delay + duration.
 * While a job runs, Cancel stops it (`capture_cancel`): the server cancels the profiler calls
 * and writes nothing.
 * Fires `pf-captured` (detail: the new session's name, if known) so the shell selects it.
 */
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';
import type { CaptureStatus, LiveInfo, ProfileApi } from '../api';
import { capturedText, clockOffset, progressText } from '../capture/progress';
import {
  HOST_TRACER_LEVELS,
  captureQuery,
  expectedCaptureMs,
  loadCaptureForm,
  saveCaptureForm,
  validateCapture,
  type CaptureForm,
} from '../capture/form';
import { controlStyles } from './shared-styles';

type Status =
  | { kind: 'idle' }
  | { kind: 'running'; text: string }
  | { kind: 'done'; message: string }
  | { kind: 'failed'; message: string }
  | { kind: 'cancelled'; message: string };

@customElement('pf-capture-dialog')
export class CaptureDialog extends LitElement {
  @property({ attribute: false }) api!: ProfileApi;
  /** The training process serving this page (live.serve): the dialog captures it by default. */
  @property({ attribute: false }) live?: LiveInfo;
  @state() private form: CaptureForm = loadCaptureForm(safeStorage());
  @state() private status: Status = { kind: 'idle' };
  @state() private errors: Partial<Record<keyof CaptureForm, string>> = {};
  @query('dialog') private dialog!: HTMLDialogElement;
  private timer: ReturnType<typeof setInterval> | undefined;
  private lastStatus: CaptureStatus | null = null;
  /** The running capture's job id, while it runs: what Cancel stops. */
  @state() private job: string | null = null;
  private clockOffsetS = 0;

  static override styles = [
    controlStyles,
    css`
      dialog {
        background: var(--pf-bg);
        color: var(--pf-text);
        border: 1px solid var(--pf-border);
        border-radius: 10px;
        padding: 20px 24px;
        width: min(34rem, 92vw);
      }
      dialog::backdrop {
        background: rgb(0 0 0 / 45%);
      }
      h2 {
        margin: 0 0 12px;
        font-size: 1.15rem;
      }
      form {
        display: grid;
        gap: 12px;
      }
      .field {
        display: grid;
        gap: 3px;
        grid-template-rows: 1fr auto auto;
        min-width: 0;
      }
      .field > label {
        align-self: end;
      }
      .field input,
      .field select {
        width: 100%;
        min-width: 0;
        box-sizing: border-box;
      }
      .field > label,
      legend {
        font-weight: 600;
        font-size: 0.9rem;
      }
      fieldset {
        border: 1px solid var(--pf-border);
        border-radius: var(--pf-radius);
        padding: 8px 12px;
        margin: 0;
      }
      .radios {
        display: flex;
        gap: 16px;
      }
      .radios label {
        display: inline-flex;
        align-items: center;
        gap: 6px;
      }
      .radios input {
        margin: 0;
      }
      .row {
        display: grid;
        grid-template-columns: repeat(2, minmax(0, 1fr));
        gap: 12px 16px;
      }
      .invalid {
        color: var(--pf-error-text);
        font-size: 0.85rem;
      }
      details summary {
        cursor: pointer;
        margin-bottom: 8px;
      }
      .actions {
        display: flex;
        justify-content: flex-end;
        gap: 8px;
      }
      .status {
        padding: 8px 12px;
        border-radius: var(--pf-radius);
        background: var(--pf-surface);
        white-space: pre-wrap;
        overflow-wrap: anywhere;
      }
      .status.failed {
        background: var(--pf-error-bg);
        color: var(--pf-error-text);
      }
      .status.done {
        background: var(--pf-info-bg);
        color: var(--pf-info-text);
      }
      .actions .cancel {
        margin-right: auto;
      }
    `,
  ];

  open(): void {
    if (this.status.kind !== 'running') this.status = { kind: 'idle' };
    if (this.live?.service_addr) this.form = { ...this.form, serviceAddr: this.live.service_addr };
    this.dialog.showModal();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    clearInterval(this.timer);
  }

  override render() {
    const f = this.form;
    const running = this.status.kind === 'running';
    return html`<dialog aria-labelledby="capture-title" @close=${this.onClose}>
      <h2 id="capture-title">Capture Profile</h2>
      <form method="dialog" @submit=${this.onSubmit} novalidate>
        <div class="field">
          <label for="service-addr">Profile Service URL(s) or TPU name</label>
          <input
            id="service-addr"
            name="serviceAddr"
            required
            autocomplete="off"
            placeholder="localhost:6009,localhost:6010"
            .value=${f.serviceAddr}
            @input=${this.onText}
            aria-invalid=${this.errors.serviceAddr ? 'true' : 'false'}
            aria-describedby="service-addr-error"
          />
          <span id="service-addr-error" class="invalid">${this.errors.serviceAddr ?? ''}</span>
        </div>
        <fieldset>
          <legend>Address type</legend>
          <div class="radios">
            <label><input type="radio" name="addrType" value="ip" .checked=${!f.isTpuName} @change=${this.onAddrType} /> IP address</label>
            <label><input type="radio" name="addrType" value="tpu" .checked=${f.isTpuName} @change=${this.onAddrType} /> TPU name</label>
          </div>
        </fieldset>
        ${f.isTpuName
          ? html`<div class="field">
              <label for="worker-list">Subset of worker TPUs (optional, comma separated)</label>
              <input id="worker-list" name="workerList" autocomplete="off" .value=${f.workerList} @input=${this.onText} />
            </div>`
          : nothing}
        <div class="row">
          ${this.numberField('duration', 'Profiling duration (ms)', 'durationMs', 1)}
          ${this.levelField('host-level', 'Host trace (TraceMe) level', 'hostTracerLevel', HOST_TRACER_LEVELS)}
          ${this.levelField('device-level', 'Device trace level', 'deviceTracerLevel', [[0, '0: disable'], [1, '1: enable']])}
          ${this.levelField('python-level', 'Python trace level', 'pythonTracerLevel', [[0, '0: disable'], [1, '1: enable']])}
        </div>
        <details>
          <summary>Advanced</summary>
          <div class="row">
            ${this.numberField('num-retry', 'Retry N times when no trace event is collected', 'numRetry', 0)}
            ${this.numberField('delay', 'Delay start (ms)', 'delayMs', 0)}
          </div>
        </details>
        ${this.renderStatus()}
        <div class="actions">
          ${running && this.job ? html`<button type="button" class="cancel" @click=${this.cancel}>Cancel capture</button>` : nothing}
          <button type="button" @click=${this.close}>${running ? 'Hide' : 'Close'}</button>
          <button type="submit" class="primary" ?disabled=${running}>Capture</button>
        </div>
      </form>
    </dialog>`;
  }

  private numberField(id: string, label: string, key: keyof CaptureForm, min: number) {
    return html`<div class="field">
      <label for=${id}>${label}</label>
      <input
        id=${id}
        name=${key}
        type="number"
        min=${min}
        step="1"
        inputmode="numeric"
        .value=${String(this.form[key])}
        @input=${this.onNumber}
        aria-invalid=${this.errors[key] ? 'true' : 'false'}
      />
      <span class="invalid">${this.errors[key] ?? ''}</span>
    </div>`;
  }

  private levelField(id: string, label: string, key: keyof CaptureForm, levels: readonly (readonly [number, string])[]) {
    return html`<div class="field">
      <label for=${id}>${label}</label>
      <select id=${id} name=${key} @change=${this.onNumber}>
        ${levels.map(([value, text]) => html`<option .value=${String(value)} ?selected=${this.form[key] === value}>${text}</option>`)}
      </select>
    </div>`;
  }

  private renderStatus() {
    const status = this.status;
    switch (status.kind) {
      case 'idle':
        return nothing;
      case 'running':
        return html`<div class="status" role="status">${status.text}</div>`;
      case 'done':
        return html`<div class="status done" role="status">${status.message}</div>`;
      case 'failed':
        return html`<div class="status failed" role="alert">Failed to capture profile: ${status.message}</div>`;
      case 'cancelled':
        return html`<div class="status cancelled" role="status">${status.message}</div>`;
    }
  }

  private onText(event: Event): void {
    const input = event.target as HTMLInputElement;
    this.form = { ...this.form, [input.name]: input.value };
  }

  private onNumber(event: Event): void {
    const input = event.target as HTMLInputElement | HTMLSelectElement;
    this.form = { ...this.form, [input.name]: input.value === '' ? NaN : Number(input.value) };
  }

  private onAddrType(event: Event): void {
    this.form = { ...this.form, isTpuName: (event.target as HTMLInputElement).value === 'tpu' };
  }

  private close(): void {
    this.dialog.close();
  }

  private onClose(): void {
    if (this.status.kind !== 'running') this.errors = {};
  }

  private async onSubmit(event: Event): Promise<void> {
    event.preventDefault();
    const form = { ...this.form, serviceAddr: this.form.serviceAddr.trim() };
    this.errors = validateCapture(form);
    if (Object.keys(this.errors).length) return;
    saveCaptureForm(safeStorage(), form);
    // Until the server reports, count down from the form's own delay + duration.
    const requestedAtS = Date.now() / 1000;
    this.lastStatus = { state: 'running', phase: 'waiting', expected_end: requestedAtS + expectedCaptureMs(form) / 1000 };
    this.clockOffsetS = 0;
    this.status = { kind: 'running', text: 'Starting the capture…' };
    this.startTicker();
    try {
      const reply = await this.api.captureAsync(captureQuery(form));
      if (reply.job) {
        this.job = reply.job;
        await this.follow(reply.job, requestedAtS);
      }
      else if (reply.error !== undefined || reply.result === undefined) this.fail(String(reply.error ?? 'The server sent no result.'));
      else this.succeed(String(reply.result));
    } catch {
      this.fail('Could not reach the server.');
    } finally {
      this.job = null;
      clearInterval(this.timer);
    }
  }

  /** Asks the server to stop the running job; `follow` then sees it cancelled. */
  private async cancel(): Promise<void> {
    const job = this.job;
    if (!job || this.status.kind !== 'running') return;
    this.lastStatus = { ...this.lastStatus, phase: 'cancelling' };
    this.tick();
    const reply = await this.api.captureCancel(job);
    if (reply.error !== undefined && reply.state === undefined && this.job === job) this.fail(String(reply.error));
  }

  /** Polls `capture_status` until the job is done or failed. */
  private async follow(job: string, requestedAtS: number): Promise<void> {
    let first = true;
    for (;;) {
      const status = await this.api.captureStatus(job);
      if (first && status.started_at !== undefined) this.clockOffsetS = clockOffset(status, requestedAtS);
      first = false;
      if (this.status.kind !== 'running') return; // cancelled here, or failed to cancel
      if (status.state === 'done') return this.succeed(String(status.result ?? 'Capture done.'), status.session);
      if (status.state === 'cancelled') {
        this.status = { kind: 'cancelled', message: 'Capture cancelled: the profiler was told to stop and nothing was written.' };
        return;
      }
      if (status.state === 'failed' || (status.error !== undefined && status.state === undefined)) {
        return this.fail(String(status.error ?? 'The capture failed.'));
      }
      this.lastStatus = status;
      this.tick();
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      if (!this.isConnected) return;
    }
  }

  private succeed(message: string, session?: string): void {
    // The shell selects the new session (pf-captured), so the server's "Please refresh" is moot.
    this.status = { kind: 'done', message: capturedText(message, session) };
    this.dispatchEvent(new CustomEvent('pf-captured', { detail: { session }, bubbles: true, composed: true }));
  }

  private fail(message: string): void {
    this.status = { kind: 'failed', message };
  }

  private tick(): void {
    if (this.status.kind !== 'running' || !this.lastStatus) return;
    this.status = { kind: 'running', text: progressText(this.lastStatus, Date.now() / 1000, this.clockOffsetS) };
  }

  private startTicker(): void {
    clearInterval(this.timer);
    this.timer = setInterval(() => {
      if (this.status.kind !== 'running') return clearInterval(this.timer);
      this.tick();
    }, 250);
  }
}

const POLL_MS = 500;

function safeStorage(): Storage | undefined {
  try {
    return window.localStorage;
  } catch {
    return undefined;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'pf-capture-dialog': CaptureDialog;
  }
}
