// @vitest-environment happy-dom
// Dashboards render profile strings as text: a table cell and a chart model with markup in an op name.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ProfileApi } from '../api';
import { pieOption } from '../charts/options';
import { LIGHT_THEME } from '../charts/theme';
import type { PieModel } from '../models/chart-models';
import './op-stats-view';
import './tf-data-view';

// The chart element would load ECharts on a canvas happy-dom does not have; the option is tested below.
vi.mock('../charts/echart', () => ({}));

const XSS = '<img src=x onerror=alert(1)>';

const opTable = {
  cols: [
    { id: 'rank', type: 'number' },
    { id: 'host_or_device', type: 'string' },
    { id: 'type', type: 'string' },
    { id: 'operation', type: 'string' },
    { id: 'total_self_time', type: 'number' },
  ],
  rows: [
    { c: [{ v: 1 }, { v: 'Host' }, { v: XSS }, { v: XSS }, { v: 5 }] },
    { c: [{ v: 2 }, { v: 'Host' }, { v: 'MatMul' }, { v: 'dense/MatMul' }, { v: 3 }] },
  ],
};

const context = {
  api: { csvUrl: () => '/data/plugin/profile/data_csv?run=r&tag=t' } as unknown as ProfileApi,
  run: 'r',
  tool: 'framework_op_stats',
  host: 'h',
};

function deepQueryAll(root: ParentNode, selector: string): Element[] {
  const found = [...root.querySelectorAll(selector)];
  for (const el of root.querySelectorAll('*')) if (el.shadowRoot) found.push(...deepQueryAll(el.shadowRoot, selector));
  return found;
}

afterEach(() => document.body.replaceChildren());

describe('dashboards keep profile strings as text', () => {
  it('TF stats table and pie model', async () => {
    const view = document.createElement('pf-op-stats-view');
    view.context = context;
    view.data = [opTable, opTable];
    document.body.append(view);
    await view.updateComplete;
    const table = view.shadowRoot!.querySelector('pf-data-table')!;
    await table.updateComplete;
    const cells = [...table.shadowRoot!.querySelectorAll('td')].map((td) => td.textContent);
    expect(cells).toContain(XSS);
    expect(deepQueryAll(document, 'img')).toHaveLength(0);
    const pies = (view as unknown as { pies: PieModel[] }).pies;
    expect(pies[0].slices[0].name).toBe(XSS);
    const option = pieOption(pies[0], LIGHT_THEME) as { tooltip: { renderMode: string; formatter: (p: unknown) => string } };
    expect(option.tooltip.renderMode).toBe('richText');
    expect(option.tooltip.formatter({ name: XSS, value: 5 })).toContain(XSS);
  });

  it('tf.data graph reads HTML fields as text', async () => {
    const view = document.createElement('pf-tf-data-view');
    view.context = { ...context, tool: 'tf_data_bottleneck_analysis' };
    view.data = [
      {
        cols: ['host', 'input_pipeline', 'rank', 'name', 'parent', 'type'].map((id) => ({ id, type: 'string' })),
        rows: [{ c: [{ v: 'h' }, { v: 'Host:0' }, { v: 0 }, { v: '1', f: `<b>${XSS}</b><br/>Self Duration: 1 us` }, { v: '' }, { v: 2 }] }],
      },
      { cols: [{ id: 'bottleneck' }, { id: 'suggestion' }], rows: [], p: { summary_message: XSS } },
    ];
    document.body.append(view);
    await view.updateComplete;
    expect(view.shadowRoot!.querySelector('p.statement')!.textContent).toBe(XSS);
    expect(view.shadowRoot!.querySelectorAll('svg g.node')).toHaveLength(1);
    expect(view.shadowRoot!.querySelector('rect.bottleneck')).not.toBeNull();
    expect(deepQueryAll(document, 'img, b')).toHaveLength(0);
  });
});
