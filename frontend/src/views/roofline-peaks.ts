/**
 * The roof a user gives for a CPU profile (which records no peaks): a small form whose values
 * become `peak_gflops` / `peak_gib_s` on the roofline request (docs/model_view.md). Fires
 * `pf-peaks` with `{ gflops, gibS }` (empty strings: back to the measured or recorded peaks).
 */
import { LitElement, css, html } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import { controlStyles } from '../components/shared-styles';

export const ROOFLINE_PEAKS_TAG = 'pf-roofline-peaks';
export const PEAKS_EVENT = 'pf-peaks';

export interface PeaksDetail {
  gflops: string;
  gibS: string;
}

/** The request parameters for the given peaks (none when both are empty). */
export function peakParams(detail: PeaksDetail | null): Record<string, string> {
  if (!detail || (!detail.gflops && !detail.gibS)) return {};
  return { peak_gflops: detail.gflops, peak_gib_s: detail.gibS };
}

@customElement(ROOFLINE_PEAKS_TAG)
export class RooflinePeaks extends LitElement {
  /** The server's message when it refused the values. */
  @property() error = '';

  static override styles = [
    controlStyles,
    css`
      form { display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: end; }
      label { display: flex; flex-direction: column; font-size: 0.8rem; }
      input { width: 8rem; }
      .error { color: var(--pf-error, #b00020); flex-basis: 100%; }
    `,
  ];

  override render() {
    return html`<form aria-label="Your peaks" @submit=${this.apply}>
      <label>Peak FLOP rate (GFLOP/s)<input name="peak_gflops" type="number" min="0" step="any" /></label>
      <label>Peak bandwidth (GiB/s)<input name="peak_gib_s" type="number" min="0" step="any" /></label>
      <button type="submit">Use these peaks</button>
      <button type="button" @click=${this.reset}>Measured / recorded peaks</button>
      ${this.error ? html`<p class="error" role="alert">${this.error}</p>` : ''}
    </form>`;
  }

  private value(name: string): string {
    return this.renderRoot.querySelector<HTMLInputElement>(`input[name="${name}"]`)?.value.trim() ?? '';
  }

  private apply(event: Event): void {
    event.preventDefault();
    const detail = { gflops: this.value('peak_gflops'), gibS: this.value('peak_gib_s') };
    if (!detail.gflops !== !detail.gibS) {
      this.error = 'Give both peaks (peak_gflops and peak_gib_s), or neither for the measured ones.';
      return;
    }
    this.error = ''; // the parent sets the server's refusal, if any
    this.fire(detail);
  }

  private reset(): void {
    for (const input of this.renderRoot.querySelectorAll('input')) input.value = '';
    this.error = '';
    this.fire({ gflops: '', gibS: '' });
  }

  private fire(detail: PeaksDetail): void {
    this.dispatchEvent(new CustomEvent<PeaksDetail>(PEAKS_EVENT, { detail, bubbles: true, composed: true }));
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'pf-roofline-peaks': RooflinePeaks;
  }
}
