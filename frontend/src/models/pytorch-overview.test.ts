import { describe, expect, it } from 'vitest';
import { pytorchOverviewModel } from './pytorch-overview';

const col = (id: string, label: string, type = 'number') => ({ id, label, type });
const row = (...values: unknown[]) => ({ c: values.map((v) => ({ v })) });
const breakdown = {
  cols: [
    col('step', 'Step', 'string'),
    col('total_us', 'Step time (us)'),
    col('kernel_us', 'Kernel (us)'),
    col('kernel_percent', 'Kernel (%)'),
    col('cpu_exec_us', 'CPU Exec (us)'),
    col('cpu_exec_percent', 'CPU Exec (%)'),
    col('other_us', 'Other (us)'),
    col('other_percent', 'Other (%)'),
  ],
  p: { title: 'Step time breakdown' },
  rows: [row('Average', 100, 60, 60, 30, 30, 10, 10), row('7', 90, 50, 55.6, 30, 33.3, 10, 11.1), row('8', 110, 70, 63.6, 30, 27.3, 10, 9.1)],
};
const gpus = { cols: [col('device', 'GPU', 'string')], p: { title: 'GPU summary' }, rows: [row('GPU 0')] };

describe('pytorchOverviewModel', () => {
  it('stacks each step by part and keeps the average shares', () => {
    const m = pytorchOverviewModel([breakdown, gpus])!;
    expect(m.averageUs).toBe(100);
    expect(m.steps).toBe(2);
    expect(m.parts.map((p) => [p.name, p.us, p.percent])).toEqual([
      ['Kernel', 60, 60],
      ['CPU Exec', 30, 30],
      ['Other', 10, 10],
    ]);
    expect(m.chart.categories).toEqual(['7', '8']);
    expect(m.chart.series[0]).toMatchObject({ name: 'Kernel', values: [50, 70] });
    expect(m.tables.map((t) => t.title)).toEqual(['Step time breakdown', 'GPU summary']);
  });

  it('declines other payloads', () => {
    expect(pytorchOverviewModel({ cols: [], rows: [] })).toBeNull();
    expect(pytorchOverviewModel([gpus])).toBeNull();
  });
});
