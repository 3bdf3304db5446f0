/** Styles shared by the components: controls, focus rings, links, tables. */
import { css } from 'lit';

export const controlStyles = css`
  :host {
    font-family: var(--pf-font);
    color: var(--pf-text);
  }
  button,
  .button,
  select,
  input {
    font: inherit;
    color: var(--pf-text);
    background: var(--pf-surface);
    border: 1px solid var(--pf-border);
    border-radius: var(--pf-radius);
    padding: 4px 10px;
    min-height: 30px;
    box-sizing: border-box;
  }
  button,
  .button {
    cursor: pointer;
    text-decoration: none;
    display: inline-flex;
    align-items: center;
    gap: 6px;
  }
  button:hover:not(:disabled),
  .button:hover {
    background: var(--pf-surface-2);
  }
  button.primary {
    background: var(--pf-accent);
    border-color: var(--pf-accent);
    color: var(--pf-accent-text);
    font-weight: 600;
  }
  button.primary:hover:not(:disabled) {
    background: var(--pf-accent);
    filter: brightness(1.1);
  }
  button:disabled {
    opacity: 0.55;
    cursor: default;
  }
  :focus-visible {
    outline: 2px solid var(--pf-focus);
    outline-offset: 2px;
  }
  a {
    color: var(--pf-link);
  }
  .visually-hidden {
    position: absolute;
    width: 1px;
    height: 1px;
    overflow: hidden;
    clip: rect(0 0 0 0);
    white-space: nowrap;
  }
  .muted {
    color: var(--pf-muted);
  }
`;

export const tableStyles = css`
  table {
    border-collapse: collapse;
    width: 100%;
    font-variant-numeric: tabular-nums;
  }
  th,
  td {
    border-bottom: 1px solid var(--pf-border);
    padding: 4px 8px;
    text-align: left;
    vertical-align: top;
  }
  th {
    background: var(--pf-surface);
    position: sticky;
    top: 0;
    font-weight: 600;
  }
  td.number,
  th.number {
    text-align: right;
  }
  td.null {
    color: var(--pf-muted);
  }
  tbody tr:hover {
    background: var(--pf-surface);
  }
`;
