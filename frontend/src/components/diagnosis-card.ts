/**
 * What the page shows when the log directory has no profile: the server's `diagnose` answer
 * (does the directory exist, what was skipped and why, which other files are there) and how to
 * record or capture a profile. Fires `pf-open-capture` from its Capture Profile button.
 */
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import type { Diagnosis, ProfileApi } from '../api';
import { controlStyles } from './shared-styles';

@customElement('pf-diagnosis')
export class DiagnosisCard extends LitElement {
  @property({ attribute: false }) api!: ProfileApi;
  @property({ type: Boolean, attribute: 'can-capture' }) canCapture = false;
  @state() private diagnosis: Diagnosis | null = null;
  @state() private failed = false;

  static override styles = [
    controlStyles,
    css`
      :host {
        display: block;
        margin: 12px 0;
      }
      .card {
        border: 1px dashed var(--pf-border);
        background: var(--pf-surface);
        border-radius: var(--pf-radius);
        padding: 20px 24px;
      }
      h2 {
        font-size: 1.1rem;
        margin: 0 0 8px;
      }
      h3 {
        font-size: 0.95rem;
        margin: 16px 0 4px;
      }
      code,
      pre {
        font-family: var(--pf-mono);
        background: var(--pf-surface-2);
        border-radius: 3px;
        padding: 1px 4px;
        overflow-wrap: anywhere;
      }
      pre {
        padding: 8px 10px;
        overflow: auto;
        white-space: pre;
      }
      li {
        overflow-wrap: anywhere;
      }
    `,
  ];

  override connectedCallback(): void {
    super.connectedCallback();
    void this.load();
  }

  private async load(): Promise<void> {
    try {
      this.diagnosis = await this.api.diagnose();
    } catch {
      this.failed = true;
    }
  }

  override render() {
    const d = this.diagnosis;
    return html`<div class="card" role="status">
      <h2>No profile found in the log directory</h2>
      ${d ? this.renderFound(d) : this.failed ? html`<p class="muted">The server could not explain why (no diagnose route).</p>` : html`<p class="muted">Looking at the log directory…</p>`}
      <h3>Record a profile</h3>
      <p>Profiles are read from <code>&lt;logdir&gt;/&lt;run&gt;/plugins/profile/&lt;session&gt;/&lt;host&gt;.xplane.pb</code>. Write one with:</p>
      <pre>
# JAX
with jax.profiler.trace("LOGDIR"):
    train_step(...)

# TensorFlow
tf.profiler.experimental.start("LOGDIR")
...
tf.profiler.experimental.stop()</pre
      >
      <h3>Or capture from a running program</h3>
      <p>
        Start a profiler server in the program — <code>jax.profiler.start_server(9999)</code> or
        <code>tf.profiler.experimental.server.start(6009)</code> — then capture into this log directory:
      </p>
      ${this.canCapture
        ? html`<button type="button" class="primary" @click=${this.openCapture}>Capture Profile</button>`
        : html`<p class="muted">Capturing is turned off on this server.</p>`}
    </div>`;
  }

  private renderFound(d: Diagnosis) {
    if (!d.exists) {
      return html`<p>The log directory <code>${d.logdir || '(not set)'}</code> does not exist. Start the server with <code>--logdir</code> pointing at your logs.</p>`;
    }
    const unreadable = d.unreadable ?? [];
    return html`<p>Log directory: <code>${d.logdir}</code> — ${d.sessions} profiling session${d.sessions === 1 ? '' : 's'} found.</p>
      ${unreadable.length
        ? html`<h3>Could not read (${unreadable.length})</h3>
            <ul class="unreadable">
              ${unreadable.map((reason) => html`<li>${reason}</li>`)}
            </ul>`
        : nothing}
      ${d.skipped.length
        ? html`<h3>Skipped (${d.skipped.length})</h3>
            <ul class="skipped">
              ${d.skipped.map((reason) => html`<li>${reason}</li>`)}
            </ul>`
        : html`<p>Nothing that looks like a profile was skipped.</p>`}
      ${d.other_files.length
        ? html`<h3>Other files</h3>
            <ul class="other">
              ${d.other_files.map((name) => html`<li><code>${name}</code></li>`)}
            </ul>`
        : d.exists
          ? html`<p class="muted">The directory holds no other files.</p>`
          : nothing}`;
  }

  private openCapture(): void {
    this.dispatchEvent(new CustomEvent('pf-open-capture', { bubbles: true, composed: true }));
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'pf-diagnosis': DiagnosisCard;
  }
}
