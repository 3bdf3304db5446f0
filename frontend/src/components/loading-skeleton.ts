/** Placeholder bars shown while data loads; announces "Loading" to assistive technology. */
import { LitElement, css, html } from 'lit';
import { customElement, property } from 'lit/decorators.js';

@customElement('pf-skeleton')
export class LoadingSkeleton extends LitElement {
  @property({ type: Number }) lines = 6;
  @property() label = 'Loading';

  static override styles = css`
    :host {
      display: block;
      margin: 12px 0;
    }
    .bar {
      height: 14px;
      margin: 8px 0;
      border-radius: 4px;
      background: linear-gradient(90deg, var(--pf-skeleton) 25%, var(--pf-skeleton-shine) 50%, var(--pf-skeleton) 75%);
      background-size: 200% 100%;
      animation: shimmer 1.4s ease-in-out infinite;
    }
    .bar:nth-child(3n + 1) {
      width: 92%;
    }
    .bar:nth-child(3n + 2) {
      width: 76%;
    }
    .bar:nth-child(3n) {
      width: 58%;
    }
    @keyframes shimmer {
      from {
        background-position: 100% 0;
      }
      to {
        background-position: -100% 0;
      }
    }
    @media (prefers-reduced-motion: reduce) {
      .bar {
        animation: none;
      }
    }
    .label {
      position: absolute;
      width: 1px;
      height: 1px;
      overflow: hidden;
      clip: rect(0 0 0 0);
    }
  `;

  override render() {
    return html`<div role="status" aria-busy="true">
      <span class="label">${this.label}…</span>
      ${Array.from({ length: this.lines }, () => html`<div class="bar"></div>`)}
    </div>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'pf-skeleton': LoadingSkeleton;
  }
}
