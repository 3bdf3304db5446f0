// @vitest-environment happy-dom
import { afterEach, describe, expect, it } from 'vitest';
import type { DataTable } from '../table/datatable';
import './data-table';
import type { DataTableElement } from './data-table';

const XSS = '<img src=x onerror=alert(1)>';

const table: DataTable = {
  cols: [
    { id: 'name', label: 'Operation', type: 'string' },
    { id: 'time', label: 'Time (us)', type: 'number' },
    { id: 'ok', label: 'Eligible', type: 'boolean' },
  ],
  rows: [
    { c: [{ v: XSS }, { v: 10.123456 }, { v: true }] },
    { c: [{ v: 'MatMul' }, { v: 9 }, null] },
    { c: [{ v: 'Conv2D' }, { v: 100 }, { v: false }] },
  ],
};

async function mount(data: DataTable, pageSize = 50): Promise<DataTableElement> {
  const element = document.createElement('pf-data-table');
  element.table = data;
  element.pageSize = pageSize;
  element.csvHref = '/data/plugin/profile/data_csv?run=r&tag=t';
  document.body.append(element);
  await element.updateComplete;
  return element;
}

const column = (element: DataTableElement, index: number) =>
  [...element.shadowRoot!.querySelectorAll('tbody tr')].map((tr) => tr.querySelectorAll('td')[index].textContent);

afterEach(() => document.body.replaceChildren());

describe('pf-data-table', () => {
  it('shows profile strings as text, never as markup', async () => {
    const element = await mount(table);
    const root = element.shadowRoot!;
    expect(root.querySelector('img')).toBeNull();
    expect(column(element, 0)).toContain(XSS);
  });

  it('formats numbers, booleans and nulls', async () => {
    const element = await mount(table);
    // "Time (us)": each value in a readable unit, the raw value in the tooltip.
    expect(column(element, 1)).toEqual(['10.1 µs', '9.00 µs', '100 µs']);
    expect(element.shadowRoot!.querySelector('tbody td.number')!.getAttribute('title')).toBe('10.123 us');
    expect(element.shadowRoot!.querySelectorAll('th button')[1].textContent!.trim()).toBe('Time');
    expect(column(element, 2)).toEqual(['true', '—', 'false']);
  });

  it('shows names whole, cut by the browser only where the width runs out, the full name on hover', async () => {
    const long = 'model/encoder/layer_11/attention/self/query/dense/MatMul/with/a/very/long/scope';
    const element = document.createElement('pf-data-table');
    element.table = { cols: table.cols, rows: [{ c: [{ v: long }, { v: 1 }, { v: true }] }, ...table.rows] };
    element.shortColumns = ['name'];
    document.body.append(element);
    await element.updateComplete;
    const cell = element.shadowRoot!.querySelector<HTMLElement>('tbody td.name')!;
    expect(cell.textContent).toBe(long);
    expect(cell.title).toBe(long);
    expect(cell.style.width).toBe('100%');
  });

  it('sorts numerically when a header is clicked, then reverses', async () => {
    const element = await mount(table);
    const button = () => element.shadowRoot!.querySelectorAll<HTMLButtonElement>('th button')[1];
    button().click();
    await element.updateComplete;
    expect(column(element, 1)).toEqual(['9.00 µs', '10.1 µs', '100 µs']);
    expect(element.shadowRoot!.querySelectorAll('th')[1].getAttribute('aria-sort')).toBe('ascending');
    button().click();
    await element.updateComplete;
    expect(column(element, 1)).toEqual(['100 µs', '10.1 µs', '9.00 µs']);
  });

  it('filters rows and shows the count', async () => {
    const element = await mount(table);
    const input = element.shadowRoot!.querySelector('input')!;
    input.value = 'conv';
    input.dispatchEvent(new Event('input'));
    await element.updateComplete;
    expect(column(element, 0)).toEqual(['Conv2D']);
    expect(element.shadowRoot!.querySelector('.count')!.textContent).toBe('1 of 3 rows');
  });

  it('pages through rows', async () => {
    const element = await mount(table, 2);
    expect(column(element, 0)).toHaveLength(2);
    element.shadowRoot!.querySelector<HTMLButtonElement>('button[aria-label="Next page"]')!.click();
    await element.updateComplete;
    expect(column(element, 0)).toEqual(['Conv2D']);
  });

  it('links Export as CSV to the server route', async () => {
    const element = await mount(table);
    const link = element.shadowRoot!.querySelector('a.export')!;
    expect(link.textContent).toBe('Export as CSV');
    expect(link.getAttribute('href')).toBe('/data/plugin/profile/data_csv?run=r&tag=t');
  });
});
