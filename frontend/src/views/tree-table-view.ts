/**
 * The drill-down tree table of op_types, scope_view and code_view: one row per type, scope,
 * Python frame or op, indented by depth, with a toggle per inner node, a name filter (matches
 * and their ancestors) and CSV export of the whole tree. Indents are classes (`d0`…`d24`):
 * the page's strict CSP forbids inline style attributes.
 */
import { LitElement, css, html, nothing, unsafeCSS } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { dashboardStyles } from '../components/dashboard-parts';
import { controlStyles, tableStyles } from '../components/shared-styles';
import { formatBytes, initiallyOpen, parseTree, visibleNodes, type Tree, type TreeNode } from '../models/tree-table';
import { formatNumber } from '../format';
import type { ToolContext, ToolViewElement } from './contract';

export const TREE_TABLE_VIEW_TAG = 'pf-tree-table-view';
const MAX_ROWS_SHOWN = 2000;
const MAX_INDENT = 24;
const indentRules = Array.from({ length: MAX_INDENT + 1 }, (_, d) => `td.name.d${d} { padding-left: ${0.5 + d * 1.1}rem; }`).join('\n');

const TITLES: Record<string, { title: string; about: string }> = {
  op_types: {
    title: 'Time per op type',
    about: 'Self time of every op, by op type; open a type to see its ops. Occurrences: runs; ops: distinct ops defined.',
  },
  scope_view: {
    title: 'Time per name scope',
    about:
      'Op self time summed over the name-scope tree (TensorFlow and ProfilerHook op names, JAX op metadata; ' +
      'PyTorch: the enclosing modules, record_function ranges and operators).',
  },
  code_view: {
    title: 'Time per Python call site',
    about: 'Op self time under the Python frames that created or launched the ops, caller first.',
  },
};

@customElement(TREE_TABLE_VIEW_TAG)
export class TreeTableView extends LitElement implements ToolViewElement {
  @property({ attribute: false }) context!: ToolContext;
  @property({ attribute: false }) data: unknown;
  @state() private open = new Set<number>();
  @state() private filter = '';
  private tree: Tree | null = null;

  static override styles = [
    controlStyles,
    tableStyles,
    dashboardStyles,
    css`
      table {
        width: 100%;
        border-collapse: collapse;
        font-variant-numeric: tabular-nums;
      }
      th,
      td {
        padding: 3px 8px;
        border-bottom: 1px solid var(--pf-border);
        white-space: nowrap;
        vertical-align: middle;
      }
      td.num,
      th.num {
        text-align: right;
      }
      td.name {
        white-space: normal;
        overflow-wrap: anywhere;
        min-width: 18rem;
      }
      .toggle {
        display: inline-block;
        width: 1.4em;
        border: none;
        background: none;
        color: inherit;
        cursor: pointer;
        padding: 0;
        min-height: 0;
        line-height: 1;
        font-size: 0.9rem;
      }
      .kind {
        color: var(--pf-muted);
        font-size: 0.8rem;
        margin-left: 6px;
      }
      .toolbar {
        display: flex;
        gap: 12px;
        align-items: center;
        flex-wrap: wrap;
        margin-bottom: 8px;
      }
    `,
    unsafeCSS(indentRules),
  ];

  override willUpdate(changed: Map<PropertyKey, unknown>): void {
    if (changed.has('data')) {
      this.tree = parseTree(this.data);
      this.open = this.tree ? initiallyOpen(this.tree) : new Set();
    }
  }

  override render() {
    const tree = this.tree;
    if (!tree) return html`<p class="muted">This payload holds no tree table.</p>`;
    const { api, run, tool, host } = this.context;
    const text = TITLES[tree.view] ?? { title: tool, about: '' };
    const rows = visibleNodes(tree, this.open, this.filter);
    const shown = rows.slice(0, MAX_ROWS_SHOWN);
    return html`
      <section class="card wide" aria-label=${text.title}>
        <h2>${text.title}</h2>
        <p class="muted">${text.about}</p>
        <div class="toolbar">
          <label>Name <input type="search" placeholder="substring" @input=${this.onFilter} /></label>
          <button type="button" @click=${this.expandAll}>Expand all</button>
          <button type="button" @click=${this.collapseAll}>Collapse</button>
          <span class="muted">${rows.length} of ${tree.nodes.length} rows shown</span>
          <a class="button export" href=${api.csvUrl(run, tool, host)}>Export as CSV</a>
        </div>
        <table>
          <thead>
            <tr>
              <th>Name</th>
              <th class="num">Total time (ms)</th>
              <th class="num">Share</th>
              <th class="num">Self time (ms)</th>
              <th class="num">Accelerator (ms)</th>
              <th class="num">CPU (ms)</th>
              <th class="num">Occurrences</th>
              <th class="num">Ops</th>
              ${tree.bytesRecorded ? html`<th class="num">Bytes</th>` : nothing}
            </tr>
          </thead>
          <tbody>
            ${shown.map((node) => this.row(node, tree.bytesRecorded))}
          </tbody>
        </table>
        ${rows.length > shown.length
          ? html`<p class="muted">Showing the first ${shown.length} rows: narrow the filter to see the rest.</p>`
          : nothing}
      </section>
    `;
  }

  private row(node: TreeNode, bytes: boolean) {
    const isOpen = this.open.has(node.id) || !!this.filter.trim();
    const ms = (us: number) => formatNumber(Math.round(us) / 1000);
    return html`<tr data-kind=${node.kind} data-id=${node.id}>
      <td class="name d${Math.min(node.depth, MAX_INDENT)}" title=${node.path}>
        ${node.hasChildren
          ? html`<button
              type="button"
              class="toggle"
              aria-expanded=${isOpen ? 'true' : 'false'}
              aria-label=${(isOpen ? 'Collapse ' : 'Expand ') + node.name}
              @click=${() => this.toggle(node.id)}
            >
              ${isOpen ? '▾' : '▸'}
            </button>`
          : html`<span class="toggle"></span>`}${node.name}<span class="kind">${node.kind}</span>
      </td>
      <td class="num">${ms(node.totalUs)}</td>
      <td class="num">${formatNumber(Math.round(node.percent * 10) / 10)}%</td>
      <td class="num">${ms(node.selfUs)}</td>
      <td class="num">${ms(node.deviceUs)}</td>
      <td class="num">${ms(node.hostUs)}</td>
      <td class="num">${formatNumber(node.occurrences)}</td>
      <td class="num">${formatNumber(node.ops)}</td>
      ${bytes ? html`<td class="num">${formatBytes(node.bytes)}</td>` : nothing}
    </tr>`;
  }

  private toggle(id: number): void {
    const open = new Set(this.open);
    if (open.has(id)) open.delete(id);
    else open.add(id);
    this.open = open;
  }

  private expandAll(): void {
    this.open = new Set(this.tree?.nodes.filter((n) => n.hasChildren).map((n) => n.id));
  }

  private collapseAll(): void {
    this.open = this.tree ? new Set([this.tree.nodes[0].id]) : new Set();
  }

  private onFilter(event: Event): void {
    this.filter = (event.target as HTMLInputElement).value;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'pf-tree-table-view': TreeTableView;
  }
}
