/**
 * Generic view for any JSON payload: a collapsible tree built from <details>, keyboard usable,
 * every key and value rendered as text. Long arrays and objects show their first entries and
 * a count of the rest, so a huge payload cannot stall the page.
 */
import { LitElement, css, html, nothing, type TemplateResult } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import { controlStyles } from '../components/shared-styles';
import type { ToolContext, ToolViewElement } from './contract';

export const JSON_VIEW_TAG = 'pf-json-view';
const MAX_CHILDREN = 200;
const OPEN_DEPTH = 1;

@customElement(JSON_VIEW_TAG)
export class JsonView extends LitElement implements ToolViewElement {
  @property({ attribute: false }) context!: ToolContext;
  @property({ attribute: false }) data: unknown;

  static override styles = [
    controlStyles,
    css`
      :host {
        display: block;
        font-family: var(--pf-mono);
        font-size: 0.9em;
      }
      .toolbar {
        font-family: var(--pf-font);
        margin: 8px 0;
      }
      details {
        margin-left: 1.2em;
      }
      :host > div > details {
        margin-left: 0;
      }
      summary {
        cursor: pointer;
      }
      .leaf {
        margin-left: 1.2em;
        overflow-wrap: anywhere;
      }
      .key {
        color: var(--pf-accent);
      }
      .string {
        color: var(--pf-link);
      }
      .meta {
        color: var(--pf-muted);
      }
    `,
  ];

  override render() {
    const link = this.context ? this.context.api.dataUrl(this.context.run, this.context.tool, this.context.host) : '';
    return html`${link
        ? html`<div class="toolbar"><a href=${link} target="_blank" rel="noopener">Open raw JSON</a></div>`
        : nothing}
      <div>${renderNode('', this.data, 0)}</div>`;
  }
}

function renderNode(key: string, value: unknown, depth: number): TemplateResult {
  const label = key ? html`<span class="key">${key}</span>: ` : nothing;
  if (value === null || typeof value !== 'object') {
    return html`<div class="leaf">${label}${renderScalar(value)}</div>`;
  }
  const entries: [string, unknown][] = Array.isArray(value)
    ? value.map((item, index) => [String(index), item])
    : Object.entries(value as Record<string, unknown>);
  const open = Array.isArray(value) ? '[' : '{';
  const shown = entries.slice(0, MAX_CHILDREN);
  return html`<details ?open=${depth < OPEN_DEPTH}>
    <summary>${label}<span class="meta">${open} ${entries.length} ${entries.length === 1 ? 'entry' : 'entries'}</span></summary>
    ${shown.map(([childKey, child]) => renderNode(childKey, child, depth + 1))}
    ${entries.length > shown.length
      ? html`<div class="leaf meta">… ${entries.length - shown.length} more not shown</div>`
      : nothing}
  </details>`;
}

function renderScalar(value: unknown): TemplateResult {
  if (typeof value === 'string') return html`<span class="string">${JSON.stringify(value)}</span>`;
  return html`<span>${value === undefined ? 'undefined' : JSON.stringify(value)}</span>`;
}

declare global {
  interface HTMLElementTagNameMap {
    'pf-json-view': JsonView;
  }
}
