/**
 * `<pf-trace-host-note>`: in a session of several hosts the trace viewer draws one host, so it
 * says which ("Host a of 2") and offers the others (issue 28 item 10: the shell falls back to
 * the first host when the wanted one is not listed, e.g. coming from a tool on all hosts; the
 * user now sees it). Choosing a host asks the shell to switch (NAVIGATE_EVENT with `host`).
 * Shows nothing for a single-host session. A run whose hosts list `ALL_HOSTS` for the trace (a
 * ProfilerHook folder's `all_steps`) opens on all of them, and the note says so.
 */
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { controlStyles } from '../components/shared-styles';
import { NAVIGATE_EVENT, type NavigateDetail, type ToolContext } from './contract';

export const TRACE_HOST_NOTE_TAG = 'pf-trace-host-note';

export const ALL_HOSTS = 'ALL_HOSTS';

/**
 * "Host b (2 of 3 hosts; the trace viewer draws one at a time)", or for every host at once (a
 * ProfilerHook run's all_steps) "All 3 hosts drawn, each one's processes named after it".
 */
export function hostNoteText(host: string, hosts: readonly string[]): string {
  if (host === ALL_HOSTS) return `All ${hosts.length} hosts drawn on one time line, each one's processes named after it.`;
  const index = hosts.indexOf(host);
  const position = index >= 0 ? `${index + 1} of ${hosts.length}` : `one of ${hosts.length}`;
  return `Host ${host} (${position} hosts; the trace viewer draws one at a time).`;
}

@customElement(TRACE_HOST_NOTE_TAG)
export class TraceHostNote extends LitElement {
  @property({ attribute: false }) context!: ToolContext;
  @state() private hosts: string[] = [];
  @state() private offersAll = false;
  private loadedFor = '';

  static override styles = [
    controlStyles,
    css`
      :host {
        display: inline-flex;
        align-items: center;
        gap: 6px;
        margin-left: 12px;
      }
      .note {
        font-weight: 600;
      }
    `,
  ];

  override willUpdate(): void {
    const key = JSON.stringify([this.context?.run, this.context?.tool]);
    if (!this.context || key === this.loadedFor) return;
    this.loadedFor = key;
    void this.load(key);
  }

  private async load(key: string): Promise<void> {
    try {
      const hosts = await this.context.api.hosts(this.context.run, this.context.tool);
      if (key !== this.loadedFor) return;
      this.hosts = hosts.filter((h) => h !== ALL_HOSTS);
      this.offersAll = hosts.includes(ALL_HOSTS);
    } catch {
      if (key === this.loadedFor) this.hosts = []; // the page's own request shows the error
    }
  }

  private choose(event: Event): void {
    const host = (event.target as HTMLSelectElement).value;
    if (host === this.context.host) return;
    const detail: NavigateDetail = { tool: this.context.tool, host };
    this.dispatchEvent(new CustomEvent<NavigateDetail>(NAVIGATE_EVENT, { detail, bubbles: true, composed: true }));
  }

  override render() {
    if (this.hosts.length < 2) return nothing;
    const host = this.context.host;
    return html`<span class="note" role="status">${hostNoteText(host, this.hosts)}</span>
      <label
        >Choose
        <select name="trace_host" aria-label="Host drawn by the trace viewer" @change=${this.choose}>
          ${this.offersAll ? html`<option .value=${ALL_HOSTS} ?selected=${host === ALL_HOSTS}>All hosts</option>` : nothing}
          ${this.hosts.map((h) => html`<option .value=${h} ?selected=${h === host}>${h}</option>`)}
        </select></label
      >`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'pf-trace-host-note': TraceHostNote;
  }
}
