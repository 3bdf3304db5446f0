import { describe, expect, it } from 'vitest';
import { firstTable, stackTarget } from './pytorch-operators';
import type { CellValue } from '../table/datatable';

const col = (id: string, type = 'string') => ({ id, label: id, type });
const row = (...values: CellValue[]) => ({ c: values.map((v) => ({ v })) });

describe('pytorch operators', () => {
  const byName = { cols: [col('name'), col('calls', 'number'), col('has_call_stack')], rows: [row('aten::mm', 3, 'Yes'), row('aten::add', 1, 'No')] };
  const byShape = { cols: [col('name'), col('input_shape'), col('has_call_stack')], rows: [row('aten::mm', '[[2, 3]]', 'Yes')] };

  it('finds the table of a list or a bare table', () => {
    expect(firstTable([byName])).toBe(byName);
    expect(firstTable(byName)).toBe(byName);
    expect(firstTable([])).toBeNull();
    expect(firstTable({ rows: [] })).toBeNull();
  });

  it('names the operator only when its calls recorded stacks', () => {
    expect(stackTarget(byName, byName.rows[0])).toEqual({ opName: 'aten::mm' });
    expect(stackTarget(byName, byName.rows[1])).toBeNull();
    expect(stackTarget(byShape, byShape.rows[0])).toEqual({ opName: 'aten::mm', inputShape: '[[2, 3]]' });
    const drillDown = { cols: [col('name'), col('call_stack')], rows: [row('aten::mm', 'a;b')] };
    expect(stackTarget(drillDown, drillDown.rows[0])).toBeNull();
  });
});
