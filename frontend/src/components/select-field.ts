/**
 * A labelled <select>. Fires `pf-select` with `detail.value` when the user picks an option.
 * While `loading`, the control is disabled and shows a spinner.
 */
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import { controlStyles } from './shared-styles';

export interface SelectOption {
  value: string;
  label: string;
}

@customElement('pf-select-field')
export class SelectField extends LitElement {
  @property() label = '';
  @property() value = '';
  @property({ attribute: false }) options: SelectOption[] = [];
  @property({ type: Boolean }) loading = false;
  @property() placeholder = '—';

  static override styles = [
    controlStyles,
    css`
      :host {
        display: inline-flex;
        flex-direction: column;
        gap: 2px;
        min-width: 10rem;
        max-width: 22rem;
      }
      label {
        font-size: 0.75rem;
        color: var(--pf-muted);
        display: flex;
        align-items: center;
        gap: 6px;
      }
      select {
        width: 100%;
        text-overflow: ellipsis;
      }
      .spinner {
        width: 10px;
        height: 10px;
        border: 2px solid var(--pf-border);
        border-top-color: var(--pf-accent);
        border-radius: 50%;
        animation: spin 0.8s linear infinite;
      }
      @keyframes spin {
        to {
          transform: rotate(360deg);
        }
      }
    `,
  ];

  override render() {
    const empty = this.options.length === 0;
    return html`<label for="select">
        ${this.label} ${this.loading ? html`<span class="spinner" aria-hidden="true"></span>` : nothing}
      </label>
      <select
        id="select"
        aria-busy=${this.loading ? 'true' : 'false'}
        ?disabled=${this.loading || empty}
        @change=${this.onChange}
      >
        ${empty ? html`<option value="">${this.loading ? 'Loading…' : this.placeholder}</option>` : nothing}
        ${this.options.map(
          (option) => html`<option .value=${option.value} ?selected=${option.value === this.value}>${option.label}</option>`,
        )}
      </select>`;
  }

  override updated(): void {
    // Keep the DOM value in sync when the options arrive after the value.
    const select = this.renderRoot.querySelector('select');
    if (select && select.value !== this.value && this.options.some((o) => o.value === this.value)) {
      select.value = this.value;
    }
  }

  private onChange(event: Event): void {
    const value = (event.target as HTMLSelectElement).value;
    this.dispatchEvent(new CustomEvent('pf-select', { detail: { value }, bubbles: true, composed: true }));
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'pf-select-field': SelectField;
  }
}
