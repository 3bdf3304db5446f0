/**
 * The PyTorch operator view (pytorch_operators): the operators grouped by name or by name and
 * input shape, and, for an operator whose calls recorded call stacks, its calls grouped by
 * call stack (the operator's name is a link then). Every table exports as CSV.
 */
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import '../components/data-table';
import '../components/message-card';
import { dashboardStyles } from '../components/dashboard-parts';
import { controlStyles } from '../components/shared-styles';
import { firstTable, stackTarget } from '../models/pytorch-operators';
import { nameColumns, type DataColumn, type DataRow, type DataTable } from '../table/datatable';
import { readViewParam, writeViewParam } from '../view-params';
import type { ToolContext, ToolViewElement } from './contract';

export const PYTORCH_OPERATORS_VIEW_TAG = 'pf-pytorch-operators-view';

type GroupBy = 'operation' | 'input_shape';

@customElement(PYTORCH_OPERATORS_VIEW_TAG)
export class PytorchOperatorsView extends LitElement implements ToolViewElement {
  @property({ attribute: false }) context!: ToolContext;
  @property({ attribute: false }) data: unknown;
  @state() private groupBy: GroupBy = readViewParam('group_by') === 'input_shape' ? 'input_shape' : 'operation';
  @state() private byShape: DataTable | null = null;
  @state() private stacks: { table: DataTable; opName: string; inputShape?: string } | null = null;
  @state() private error = '';

  static override styles = [
    controlStyles,
    dashboardStyles,
    css`
      .toolbar {
        display: flex;
        gap: 16px;
        align-items: center;
        margin-bottom: 12px;
      }
    `,
  ];

  override willUpdate(changed: Map<PropertyKey, unknown>): void {
    if (changed.has('data')) this.stacks = null;
    if (this.groupBy === 'input_shape' && !this.byShape && !this.error) void this.loadByShape();
  }

  private params(extra: Record<string, string | undefined> = {}) {
    const { run, tool, host } = this.context;
    return { run, tag: tool, host: host || undefined, group_by: this.groupBy === 'input_shape' ? 'input_shape' : undefined, ...extra };
  }

  private async loadByShape(): Promise<void> {
    try {
      this.byShape = firstTable(await this.context.api.getJson<unknown>('data', this.params()));
    } catch (error) {
      this.error = (error as Error).message;
    }
  }

  override render() {
    const table = this.groupBy === 'input_shape' ? this.byShape : firstTable(this.data);
    const { api } = this.context;
    const link = (row: DataRow, column: DataColumn) => (column.id === 'name' && table && stackTarget(table, row) ? '#call-stacks' : null);
    const title = String(table?.p?.title ?? 'Operators');
    return html`
      <div class="toolbar">
        <label
          >Group by
          <select name="group_by" @change=${this.onGroup}>
            <option value="operation" ?selected=${this.groupBy === 'operation'}>Operator</option>
            <option value="input_shape" ?selected=${this.groupBy === 'input_shape'}>Operator and input shape</option>
          </select>
        </label>
        <span class="muted">An operator's name opens its call stacks when they were recorded (with_stack=True).</span>
      </div>
      ${this.error ? html`<pf-message kind="error" heading="Operators" .message=${this.error}></pf-message>` : nothing}
      ${this.stacks ? this.renderStacks() : nothing}
      ${table
        ? html`<section class="card wide" aria-label=${title}>
            <h2>${title}</h2>
            <pf-data-table
              .table=${table}
              .shortColumns=${nameColumns(table)}
              .cellLink=${link}
              caption=${title}
              csv-href=${api.url('data_csv', { ...this.params(), table: 0 })}
              @pf-cell-link=${this.onLink}
            ></pf-data-table>
          </section>`
        : html`<p class="muted">Loading…</p>`}
    `;
  }

  private renderStacks() {
    const { table, opName, inputShape } = this.stacks!;
    const title = String(table.p?.title ?? `Call stacks of ${opName}`);
    const csv = this.context.api.url('data_csv', { ...this.params({ op_name: opName, input_shape: inputShape }), table: 0 });
    return html`<section class="card wide" aria-label="Call stacks">
      <h2>${title} <button type="button" class="close" @click=${() => (this.stacks = null)}>Close</button></h2>
      <pf-data-table .table=${table} caption=${title} csv-href=${csv}></pf-data-table>
    </section>`;
  }

  private async onLink(event: CustomEvent<{ row: DataRow }>): Promise<void> {
    const table = this.groupBy === 'input_shape' ? this.byShape : firstTable(this.data);
    const target = table ? stackTarget(table, event.detail.row) : null;
    if (!target) return;
    try {
      const params = this.params({ op_name: target.opName, input_shape: target.inputShape });
      const stacks = firstTable(await this.context.api.getJson<unknown>('data', params));
      this.stacks = stacks ? { table: stacks, ...target } : null;
      this.error = '';
    } catch (error) {
      this.error = (error as Error).message;
    }
  }

  private onGroup(event: Event): void {
    this.groupBy = (event.target as HTMLSelectElement).value === 'input_shape' ? 'input_shape' : 'operation';
    this.stacks = null;
    writeViewParam('group_by', this.groupBy === 'input_shape' ? 'input_shape' : '');
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'pf-pytorch-operators-view': PytorchOperatorsView;
  }
}
