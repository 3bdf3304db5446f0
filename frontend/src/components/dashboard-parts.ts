/**
 * Pieces every dashboard uses: card and metric styles, text-with-links rendering of upstream
 * strings, links that switch the tool selector, and the diagnostics list. All profile strings
 * are bound as text.
 */
import { css, html, nothing, type TemplateResult } from 'lit';
import { segments } from '../models/rich-text';
import { formatMs } from '../format';
import type { Diagnostic, Metric } from '../models/overview';
import type { ComponentStat } from '../models/step-time';
import { formatNumber } from '../format';
import { toolLabel } from '../state';
import { NAVIGATE_EVENT, type NavigateDetail } from '../views/contract';

export const dashboardStyles = css`
  :host {
    display: block;
  }
  .grid {
    display: grid;
    grid-template-columns: repeat(auto-fit, minmax(30rem, 1fr));
    gap: 16px;
    margin: 12px 0;
  }
  .card {
    background: var(--pf-surface);
    border: 1px solid var(--pf-border);
    border-radius: var(--pf-radius);
    padding: 12px 16px;
    min-width: 0;
  }
  .card.wide {
    grid-column: 1 / -1;
  }
  h2 {
    font-size: 1.05rem;
    margin: 0 0 8px;
  }
  h3 {
    font-size: 0.95rem;
    margin: 12px 0 4px;
  }
  .metrics {
    display: grid;
    grid-template-columns: repeat(auto-fill, minmax(11rem, 1fr));
    gap: 10px 16px;
    margin: 0;
  }
  .metric dt {
    color: var(--pf-muted);
    font-size: 0.8rem;
  }
  .metric dd {
    margin: 0;
    font-size: 1.15rem;
    font-weight: 600;
    font-variant-numeric: tabular-nums;
    overflow-wrap: anywhere;
  }
  .metric .hint {
    display: block;
    font-size: 0.75rem;
    font-weight: 400;
    color: var(--pf-muted);
  }
  .statement {
    margin: 0 0 8px;
    white-space: pre-wrap;
  }
  .verdict {
    border-left: 4px solid var(--pf-accent);
    padding-left: 10px;
  }
  ul.tips {
    margin: 4px 0 8px;
    padding-left: 1.2rem;
  }
  ul.tips li {
    margin: 2px 0;
  }
  .diagnostics .WARNING,
  .diagnostics .warning {
    color: var(--pf-accent);
  }
  .diagnostics .ERROR,
  .diagnostics .error {
    color: var(--pf-error-text);
  }
  .diagnostics li {
    white-space: pre-wrap;
  }
  .toolbar {
    display: flex;
    flex-wrap: wrap;
    align-items: flex-end;
    gap: 12px;
    margin: 8px 0;
  }
  .toolbar label {
    display: inline-flex;
    flex-direction: column;
    font-size: 0.8rem;
    color: var(--pf-muted);
    gap: 2px;
  }
  .toolbar label.inline {
    flex-direction: row;
    align-items: center;
    gap: 6px;
    font-size: inherit;
    color: var(--pf-text);
  }
  .grid + section,
  .pies + .card {
    margin-top: 16px;
  }
  .step-slider {
    width: min(40rem, 80vw);
  }
  .swatch {
    display: inline-block;
    width: 10px;
    height: 10px;
    border-radius: 2px;
    margin-right: 6px;
  }
  table.breakdown {
    border-collapse: collapse;
    width: 100%;
    font-variant-numeric: tabular-nums;
  }
  table.breakdown td,
  table.breakdown th {
    padding: 3px 8px;
    border-bottom: 1px solid var(--pf-border);
    text-align: left;
  }
  table.breakdown td.number,
  table.breakdown th.number {
    text-align: right;
  }
  details > summary {
    cursor: pointer;
    font-weight: 600;
    margin: 8px 0;
  }
  .pies {
    display: grid;
    grid-template-columns: repeat(auto-fit, minmax(24rem, 1fr));
    gap: 16px;
  }
`;

/** Upstream text with `<a>` links: plain text plus real links (http/https only), never HTML. */
export function richText(text: string): TemplateResult {
  return html`${segments(text).map((s) =>
    s.href ? html`<a href=${s.href} target="_blank" rel="noopener noreferrer">${s.text}</a>` : s.text,
  )}`;
}

export function navigate(from: Element, tool: string): void {
  from.dispatchEvent(new CustomEvent<NavigateDetail>(NAVIGATE_EVENT, { detail: { tool }, bubbles: true, composed: true }));
}

/** A link to another tool of this run: a real href (new tab works) that switches in place. */
export function toolLink(from: Element, run: string, tool: string, label = toolLabel(tool)): TemplateResult {
  const params = new URLSearchParams(window.location.search);
  params.set('run', run);
  params.set('tool', tool);
  params.delete('host');
  const onClick = (event: MouseEvent) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
    event.preventDefault();
    navigate(from, tool);
  };
  return html`<a class="tool-link" href=${'?' + params.toString()} @click=${onClick}>${label}</a>`;
}

export function metricList(metrics: readonly Metric[]) {
  return html`<dl class="metrics">
    ${metrics.map(
      (m) => html`<div class="metric">
        <dt>${m.label}</dt>
        <dd>${m.value}${m.hint ? html`<span class="hint">${m.hint}</span>` : nothing}</dd>
      </div>`,
    )}
  </dl>`;
}

export function diagnosticsCard(diagnostics: readonly Diagnostic[]) {
  if (!diagnostics.length) return nothing;
  return html`<section class="card wide diagnostics" aria-label="Diagnostics">
    <h2>Diagnostics</h2>
    <ul>
      ${diagnostics.map((d) => html`<li class=${d.severity}><strong>${d.severity || 'INFO'}</strong>: ${d.message}</li>`)}
    </ul>
  </section>`;
}

/** Average / σ / share of each step-time component, with its chart colour. */
export function breakdownTable(components: readonly ComponentStat[]) {
  return html`<table class="breakdown" aria-label="Average step time breakdown">
    <thead>
      <tr>
        <th>Component</th>
        <th class="number">Average</th>
        <th class="number">σ</th>
        <th class="number">Share</th>
      </tr>
    </thead>
    <tbody>
      ${components.map(
        (c) => html`<tr>
          <td>
            <svg class="swatch" width="10" height="10" aria-hidden="true"><rect width="10" height="10" fill=${c.color}></rect></svg
            >${c.label}
          </td>
          <td class="number">${formatMs(c.averageMs)}</td>
          <td class="number">${formatMs(c.deviationMs)}</td>
          <td class="number">${formatNumber(Math.round(c.percent * 10) / 10)}%</td>
        </tr>`,
      )}
    </tbody>
  </table>`;
}
