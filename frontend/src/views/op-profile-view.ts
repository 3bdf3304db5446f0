/**
 * op_profile: the HLO ops as a tree to drill into. Group by program (program → category → op) or
 * by category, with or without idle time (both kept in the URL); a breadcrumb walks back up; an
 * op's name opens it in the graph viewer.
 */
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import '../components/message-card';
import { dashboardStyles } from '../components/dashboard-parts';
import { controlStyles, tableStyles } from '../components/shared-styles';
import { childRows, isOpProfile, nodeAt, opProfileRoot, type OpProfilePayload, type OpRow } from '../models/xla';
import { formatNumber } from '../format';
import { readViewParam, writeViewParam } from '../view-params';
import type { ToolContext, ToolViewElement } from './contract';
import { opLink } from './xla-parts';

export const OP_PROFILE_VIEW_TAG = 'pf-op-profile-view';

@customElement(OP_PROFILE_VIEW_TAG)
export class OpProfileView extends LitElement implements ToolViewElement {
  @property({ attribute: false }) context!: ToolContext;
  @property({ attribute: false }) data: unknown;
  @state() private groupBy = readViewParam('group_by') === 'category' ? 'category' : 'program';
  @state() private withIdle = readViewParam('idle') === '1';
  @state() private path: string[] = [];
  @state() private byCategory: OpProfilePayload | null = null;
  @state() private error = '';

  static override styles = [
    controlStyles,
    dashboardStyles,
    tableStyles,
    css`
      td.bar {
        width: 30%;
      }
      meter {
        width: 100%;
      }
      button.drill {
        all: unset;
        cursor: pointer;
        color: var(--pf-link, #2a62c9);
      }
      nav.crumbs button {
        all: unset;
        cursor: pointer;
        color: var(--pf-link, #2a62c9);
      }
    `,
  ];

  override willUpdate(changed: Map<PropertyKey, unknown>): void {
    if (changed.has('data')) this.path = [];
    if (this.groupBy === 'category' && !this.byCategory && !this.error) void this.loadCategory();
  }

  private async loadCategory(): Promise<void> {
    const { api, run, tool, host } = this.context;
    try {
      const data = await api.getJson<unknown>('data', { run, tag: tool, host: host || undefined, group_by: 'category' });
      this.byCategory = isOpProfile(data) ? data : null;
    } catch (error) {
      this.error = (error as Error).message;
    }
  }

  override render() {
    const payload = this.groupBy === 'category' ? this.byCategory : isOpProfile(this.data) ? this.data : null;
    const root = payload ? opProfileRoot(payload, this.withIdle) : undefined;
    const { node, path } = root ? nodeAt(root, this.path) : { node: undefined, path: [] };
    const total = root?.metrics?.rawTime ?? 0;
    return html`
      <div class="toolbar">
        <label
          >Group by
          <select name="group_by" @change=${this.onGroup}>
            <option value="program" ?selected=${this.groupBy === 'program'}>Program</option>
            <option value="category" ?selected=${this.groupBy === 'category'}>Category</option>
          </select>
        </label>
        <label class="inline idle-toggle"><input type="checkbox" name="idle" .checked=${this.withIdle} @change=${this.onIdle} /> Include IDLE time</label>
        ${payload?.deviceType ? html`<span class="muted">Device: ${payload.deviceType}</span>` : nothing}
      </div>
      ${this.error ? html`<pf-message kind="error" heading="Op profile" .message=${this.error}></pf-message>` : nothing}
      ${node
        ? html`<section class="card wide" aria-label="Op profile">
            <nav class="crumbs" aria-label="Path">
              <button type="button" @click=${() => (this.path = [])}>${root!.name}</button>
              ${path.map((name, i) => html` › <button type="button" @click=${() => (this.path = path.slice(0, i + 1))}>${name}</button>`)}
            </nav>
            <p class="muted">${formatNumber((node.metrics?.rawTime ?? 0) / 1e9)} ms self time in ${(node.children ?? []).length} items</p>
            ${this.renderTable(childRows(node, total), path)}
          </section>`
        : html`<p class="muted">Loading…</p>`}
    `;
  }

  private renderTable(rows: OpRow[], path: string[]) {
    const { run } = this.context;
    return html`<table aria-label="Op profile items">
      <thead>
        <tr>
          <th>Name</th>
          <th class="number">Self time (ms)</th>
          <th class="number">Share</th>
          <th>Share of total</th>
          <th class="number">Occurrences</th>
          <th class="number">GFLOP/s</th>
          <th>Framework op</th>
        </tr>
      </thead>
      <tbody>
        ${rows.map(
          (r) => html`<tr>
            <td>
              ${r.isOp
                ? opLink(this, run, r.module, r.name)
                : r.hasChildren
                  ? html`<button type="button" class="drill" @click=${() => (this.path = [...path, r.name])}>${r.name} ›</button>`
                  : r.name}
            </td>
            <td class="number">${formatNumber(Math.round(r.timeMs * 1000) / 1000)}</td>
            <td class="number">${formatNumber(Math.round(r.share * 1000) / 10)}%</td>
            <td class="bar"><meter min="0" max="1" .value=${r.share}></meter></td>
            <td class="number">${r.occurrences}</td>
            <td class="number">${formatNumber(Math.round(r.gflops * 1000) / 1000)}</td>
            <td>${r.provenance}</td>
          </tr>`,
        )}
      </tbody>
    </table>`;
  }

  private onGroup(event: Event): void {
    this.groupBy = (event.target as HTMLSelectElement).value === 'category' ? 'category' : 'program';
    this.path = [];
    writeViewParam('group_by', this.groupBy === 'category' ? 'category' : '');
  }

  private onIdle(event: Event): void {
    this.withIdle = (event.target as HTMLInputElement).checked;
    writeViewParam('idle', this.withIdle ? '1' : '');
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'pf-op-profile-view': OpProfileView;
  }
}
