/**
 * "Copy link": the address that reopens this view (run, tool, host and the view's own choices,
 * such as the trace's time range), TensorBoard's address when the page is its Profile tab.
 * The link is copied to the clipboard when the browser allows it, and always shown in a
 * selected text field, so it can be copied by hand where the clipboard is refused (an iframe
 * without the clipboard permission, a page over plain HTTP on another host).
 */
import { LitElement, css, html, nothing } from 'lit';
import { customElement, state } from 'lit/decorators.js';
import { shareableLink } from '../host-url';
import { controlStyles } from './shared-styles';

@customElement('pf-copy-link')
export class CopyLink extends LitElement {
  @state() private link = '';
  @state() private status = '';

  static override styles = [
    controlStyles,
    css`
      :host {
        position: relative;
        display: inline-block;
      }
      .popup {
        position: absolute;
        right: 0;
        top: calc(100% + 4px);
        z-index: 5;
        display: flex;
        flex-direction: column;
        gap: 4px;
        padding: 8px;
        width: min(36rem, 80vw);
        background: var(--pf-bg);
        border: 1px solid var(--pf-border);
        border-radius: var(--pf-radius);
        box-shadow: 0 2px 8px rgb(0 0 0 / 15%);
      }
      .popup input {
        width: 100%;
        box-sizing: border-box;
      }
      .status {
        color: var(--pf-muted);
        font-size: 0.85rem;
      }
    `,
  ];

  override render() {
    return html`<button type="button" class="copy-link" title="A link that opens this view (run, tool, host, time range)" @click=${this.copy}>
        Copy link
      </button>
      ${this.link
        ? html`<div class="popup" role="dialog" aria-label="Link to this view">
            <input class="link" readonly .value=${this.link} aria-label="Link to this view" @keydown=${this.onKey} />
            <span class="status" role="status">${this.status}</span>
          </div>`
        : nothing}`;
  }

  private async copy(): Promise<void> {
    if (this.link) {
      this.link = '';
      return;
    }
    this.link = shareableLink(window);
    this.status = 'Select the link and copy it (Ctrl+C).';
    await this.updateComplete;
    this.renderRoot.querySelector<HTMLInputElement>('input.link')?.select();
    try {
      await navigator.clipboard.writeText(this.link);
      this.status = 'Copied to the clipboard. It opens this view on this server.';
    } catch {
      // Refused (no permission in this frame, or not a secure context): the field stays selected.
    }
  }

  private onKey(event: KeyboardEvent): void {
    if (event.key === 'Escape') this.link = '';
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'pf-copy-link': CopyLink;
  }
}
