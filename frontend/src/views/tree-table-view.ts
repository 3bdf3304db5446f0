/**
 * The drill-down tree table of op_types, scope_view and code_view: one row per type, scope,
 * Python frame or op, indented by depth, with a toggle per inner node, a name filter (matches
 * and their ancestors) and CSV export of the whole tree. Indents are classes (`d0`…`d24`):
 * the page's strict CSP forbids inline style attributes.
 *
 * tfprof's options (tree-options-form.ts) and clicks on a column header ask the server for
 * the tree again with the options as parameters; CSV export and the pprof download carry them.
 */
import { LitElement, css, html, nothing, unsafeCSS } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { dashboardStyles } from '../components/dashboard-parts';
import { controlStyles, tableStyles } from '../components/shared-styles';
import { formatBytes, initiallyOpen, parseTree, visibleNodes, type Tree, type TreeNode } from '../models/tree-table';
import { DEFAULT_TREE_OPTIONS, PPROF_VIEWS, TREE_COLUMNS, columnShown, optionParams, orderAfterClick, type TreeOptions } from '../models/tree-options';
import { formatNumber } from '../format';
import type { ToolContext, ToolViewElement } from './contract';
import './tree-options-form';

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
  @state() private options: TreeOptions = DEFAULT_TREE_OPTIONS;
  @state() private optionsError = '';
  @state() private loading = false;
  private tree: Tree | null = null;
  private request: AbortController | null = null;

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
      th button.sort {
        border: none;
        background: none;
        padding: 0;
        min-height: 0;
        font-weight: 600;
        cursor: pointer;
      }
      th[aria-sort] button.sort {
        color: var(--pf-accent);
      }
      details.options {
        margin-bottom: 10px;
      }
      details.options summary {
        cursor: pointer;
        margin-bottom: 6px;
      }
      .error {
        color: var(--pf-critical, #b3261e);
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
    const before = changed.get('context') as ToolContext | undefined;
    if (before && (before.run !== this.context.run || before.tool !== this.context.tool || before.host !== this.context.host)) {
      this.options = DEFAULT_TREE_OPTIONS; // another tree: the shell sent it without options
      this.optionsError = '';
    }
    if (changed.has('data')) {
      this.tree = parseTree(this.data);
      this.open = this.tree ? initiallyOpen(this.tree) : new Set();
    }
  }

  override render() {
    const tree = this.tree;
    if (!tree) return html`<p class="muted">This payload holds no tree table.</p>`;
    const { tool } = this.context;
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
          <a class="button export" href=${this.optionUrl('data_csv')}>Export as CSV</a>
          ${PPROF_VIEWS.has(tree.view)
            ? html`<a class="button pprof" href=${this.optionUrl('data', { format: 'pprof' })} download=${`${tool}.pb.gz`}
                title="profile.proto (gzip) for go tool pprof or speedscope">Download pprof</a>`
              : nothing}
          ${this.loading ? html`<span class="muted" role="status">Applying…</span>` : nothing}
        </div>
        <details class="options" ?open=${this.optionsError !== '' || this.options !== DEFAULT_TREE_OPTIONS}>
          <summary>tfprof options</summary>
          <pf-tree-options-form .options=${this.options} @pf-tree-options=${this.onOptions}></pf-tree-options-form>
          ${this.optionsError ? html`<p class="error" role="alert">${this.optionsError}</p>` : nothing}
        </details>
        <table>
          <thead>
            <tr>
              ${this.header('name', 'Name', false)}
              ${TREE_COLUMNS.filter((c) => this.shows(c.id, tree)).map((c) => this.header(c.id, c.label, true))}
            </tr>
          </thead>
          <tbody>
            ${shown.map((node) => this.row(node, tree))}
          </tbody>
        </table>
        ${rows.length > shown.length
          ? html`<p class="muted">Showing the first ${shown.length} rows: narrow the filter to see the rest.</p>`
          : nothing}
      </section>
    `;
  }

  private row(node: TreeNode, tree: Tree) {
    const isOpen = this.open.has(node.id) || !!this.filter.trim();
    const ms = (us: number) => formatNumber(Math.round(us) / 1000);
    const cells: Record<string, () => string> = {
      total_time_us: () => ms(node.totalUs),
      total_time_percent: () => `${formatNumber(Math.round(node.percent * 10) / 10)}%`,
      self_time_us: () => ms(node.selfUs),
      device_time_us: () => ms(node.deviceUs),
      host_time_us: () => ms(node.hostUs),
      occurrences: () => formatNumber(node.occurrences),
      ops: () => formatNumber(node.ops),
      bytes: () => formatBytes(node.bytes),
    };
    const cell = (id: string) => cells[id]();
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
      ${TREE_COLUMNS.filter((c) => this.shows(c.id, tree)).map((c) => html`<td class="num">${cell(c.id)}</td>`)}
    </tr>`;
  }

  /** Whether a value column is on the page: chosen, and bytes only when recorded. */
  private shows(id: string, tree: Tree): boolean {
    return columnShown(this.options, id) && (id !== 'bytes' || tree.bytesRecorded);
  }

  /** A column header; a click orders siblings by it (the server sorts). */
  private header(id: string, label: string, numeric: boolean) {
    const sorted = (this.options.orderBy === id || (id === 'total_time_percent' && this.options.orderBy === 'total_time_us'));
    return html`<th class=${numeric ? 'num' : ''} data-column=${id} aria-sort=${sorted ? (numeric ? 'descending' : 'ascending') : nothing}>
      <button type="button" class="sort" title="Order by ${label}" @click=${() => this.applyOptions(orderAfterClick(this.options, id))}>
        ${label}${sorted ? (numeric ? ' ▾' : ' ▴') : ''}
      </button>
    </th>`;
  }

  private optionUrl(route: string, extra: Record<string, string> = {}): string {
    const { api, run, tool, host } = this.context;
    return api.url(route, { run, tag: tool, host: host || undefined, ...optionParams(this.options), ...extra });
  }

  private onOptions(event: CustomEvent<TreeOptions>): void {
    this.applyOptions(event.detail);
  }

  /** Asks the server for the tree under `options`; a refused option keeps the tree and says why. */
  private async applyOptions(options: TreeOptions): Promise<void> {
    const { api, run, tool, host } = this.context;
    this.request?.abort();
    const request = (this.request = new AbortController());
    this.loading = true;
    try {
      const params = { run, tag: tool, host: host || undefined, ...optionParams(options) };
      const data = await api.getJson<unknown>('data', params, request.signal);
      this.options = options;
      this.optionsError = '';
      this.data = data;
    } catch (error) {
      if (request.signal.aborted) return;
      this.optionsError = error instanceof Error ? error.message : String(error);
    } finally {
      if (this.request === request) this.loading = false;
    }
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
