/**
 * A banner or card for errors (role=alert), informational notes (e.g. NOT_APPLICABLE) and
 * empty states. Texts are bound as text, so messages from the server cannot inject markup.
 */
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property } from 'lit/decorators.js';

export type MessageKind = 'error' | 'info' | 'empty';

@customElement('pf-message')
export class MessageCard extends LitElement {
  @property() kind: MessageKind = 'info';
  @property() heading = '';
  @property() code = '';
  @property() message = '';

  static override styles = css`
    :host {
      display: block;
      margin: 12px 0;
    }
    .card {
      border: 1px solid var(--pf-info-border);
      background: var(--pf-info-bg);
      color: var(--pf-info-text);
      border-radius: var(--pf-radius);
      padding: 12px 16px;
    }
    .card.error {
      border-color: var(--pf-error-border);
      background: var(--pf-error-bg);
      color: var(--pf-error-text);
    }
    .card.empty {
      border-style: dashed;
      background: var(--pf-surface);
      color: var(--pf-text);
      padding: 24px;
    }
    h2 {
      font-size: 1rem;
      margin: 0 0 4px;
    }
    code {
      font-family: var(--pf-mono);
      font-size: 0.85em;
      margin-right: 6px;
    }
    p {
      margin: 0;
      white-space: pre-wrap;
      overflow-wrap: anywhere;
    }
  `;

  override render() {
    return html`<div class="card ${this.kind}" role=${this.kind === 'error' ? 'alert' : 'status'}>
      ${this.heading ? html`<h2>${this.heading}</h2>` : nothing}
      <p>${this.code ? html`<code>${this.code}</code>` : nothing}${this.message}</p>
      <slot></slot>
    </div>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'pf-message': MessageCard;
  }
}
