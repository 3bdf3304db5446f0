/**
 * The tfprof options form of the tree views: order, depth, minimum time, name and type
 * patterns, and the columns to show. It holds the values being edited and fires
 * `pf-tree-options` (detail: TreeOptions) on Apply or Reset; the tree view asks the server.
 */
import { LitElement, css, html } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { controlStyles } from '../components/shared-styles';
import { DEFAULT_TREE_OPTIONS, TREE_COLUMNS, columnShown, type TreeOptions } from '../models/tree-options';

export const TREE_OPTIONS_EVENT = 'pf-tree-options';
const ORDER_CHOICES = [{ id: 'name', label: 'Name' }, ...TREE_COLUMNS.filter((c) => c.id !== 'total_time_percent')];

@customElement('pf-tree-options-form')
export class TreeOptionsForm extends LitElement {
  @property({ attribute: false }) options: TreeOptions = DEFAULT_TREE_OPTIONS;
  @state() private draft: TreeOptions = DEFAULT_TREE_OPTIONS;

  static override styles = [
    controlStyles,
    css`
      form {
        display: grid;
        grid-template-columns: repeat(auto-fill, minmax(15rem, 1fr));
        gap: 8px 16px;
        align-items: start;
      }
      label {
        display: flex;
        flex-direction: column;
        gap: 2px;
        font-size: 0.85rem;
      }
      fieldset {
        grid-column: 1 / -1;
        border: 1px solid var(--pf-border);
        border-radius: var(--pf-radius);
        display: flex;
        flex-wrap: wrap;
        gap: 4px 14px;
      }
      fieldset label {
        flex-direction: row;
        align-items: center;
        gap: 4px;
      }
      .buttons {
        display: flex;
        gap: 8px;
      }
      .hint {
        color: var(--pf-muted);
        font-size: 0.8rem;
      }
    `,
  ];

  override willUpdate(changed: Map<PropertyKey, unknown>): void {
    if (changed.has('options')) this.draft = { ...this.options };
  }

  override render() {
    const d = this.draft;
    const text = (field: keyof TreeOptions, label: string, placeholder: string, hint: string) => html`<label
      >${label}
      <input
        name=${field}
        .value=${String(d[field])}
        placeholder=${placeholder}
        maxlength="4200"
        @input=${(e: Event) => this.set(field, (e.target as HTMLInputElement).value)}
      /><span class="hint">${hint}</span></label
    >`;
    return html`<form @submit=${this.apply} aria-label="tfprof options">
      <label
        >Order by
        <select name="orderBy" @change=${(e: Event) => this.set('orderBy', (e.target as HTMLSelectElement).value)}>
          ${ORDER_CHOICES.map((c) => html`<option value=${c.id} ?selected=${d.orderBy === c.id}>${c.label}</option>`)}
        </select>
      </label>
      ${text('maxDepth', 'Max depth', 'all levels', 'levels under the root (tfprof -max_depth)')}
      ${text('minMicros', 'Min total time (us)', '0', 'hide smaller nodes (-min_micros)')}
      ${text('show', 'Show names', '.*', 'comma list of regexes, whole name (-show_name_regexes)')}
      ${text('hide', 'Hide names', 'none', 'children stay, moved up (-hide_name_regexes)')}
      ${text('account', 'Count op types', 'all', 'only these types add up (-account_type_regexes)')}
      <fieldset>
        <legend>Columns (-select)</legend>
        ${TREE_COLUMNS.map(
          (c) => html`<label
            ><input
              type="checkbox"
              name="column"
              value=${c.id}
              .checked=${columnShown(d, c.id)}
              @change=${(e: Event) => this.toggleColumn(c.id, (e.target as HTMLInputElement).checked)}
            />${c.label}</label
          >`,
        )}
      </fieldset>
      <div class="buttons">
        <button type="submit" class="primary">Apply</button>
        <button type="button" @click=${this.reset}>Reset</button>
      </div>
    </form>`;
  }

  private set(field: keyof TreeOptions, value: string): void {
    this.draft = { ...this.draft, [field]: value };
  }

  private toggleColumn(id: string, on: boolean): void {
    const current = this.draft.columns.length ? this.draft.columns : TREE_COLUMNS.map((c) => c.id);
    const columns = on ? [...new Set([...current, id])] : current.filter((c) => c !== id);
    this.draft = { ...this.draft, columns: columns.length === TREE_COLUMNS.length ? [] : columns };
  }

  private apply(event: Event): void {
    event.preventDefault();
    this.emit(this.draft);
  }

  private reset(): void {
    this.emit({ ...DEFAULT_TREE_OPTIONS });
  }

  private emit(options: TreeOptions): void {
    this.dispatchEvent(new CustomEvent<TreeOptions>(TREE_OPTIONS_EVENT, { detail: options, bubbles: true, composed: true }));
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'pf-tree-options-form': TreeOptionsForm;
  }
}
