import { describe, expect, it } from 'vitest';
import { tableRows } from '../table/datatable';
import { filterOps, NO_OP_FILTER, opFilterFor, opStatsTables, opTableForDisplay } from './op-stats';
import { haveReference, reference } from './reference-fixtures';

describe.skipIf(!haveReference)('"Show in TF stats" filter', () => {
  const table = opStatsTables(reference('tf_memory', 'framework_op_stats.json')).withoutIdle!;
  const shown = (name: string) => tableRows(filterOps(table, opFilterFor(table, name))).length;

  it('filters by the operation name when it matches', () => {
    expect(opFilterFor(table, 'gradient_tape/matmul/MatMul')).toEqual({ ...NO_OP_FILTER, name: 'gradient_tape/matmul/MatMul' });
    expect(shown('gradient_tape/matmul/MatMul')).toBeGreaterThan(0);
  });

  it('falls back to the type, then to the name before a colon', () => {
    expect(opFilterFor(table, 'concatv2').type).toBe('ConcatV2');
    expect(opFilterFor(table, 'matmul_1:MatMul')).toEqual({ ...NO_OP_FILTER, name: 'matmul_1' });
    expect(shown('matmul_1:MatMul')).toBeGreaterThan(0);
  });

  it('keeps an unmatched name as given, so the box shows what filters the table', () => {
    expect(opFilterFor(table, 'no such op')).toEqual({ ...NO_OP_FILTER, name: 'no such op' });
  });
});

describe.skipIf(!haveReference)('op table as shown', () => {
  it('shows the "(%)" fractions as percentages', () => {
    const table = opStatsTables(reference('tf_keras2_fit', 'framework_op_stats.json')).withoutIdle!;
    const col = table.cols.findIndex((c) => c.id === 'host_total_self_time_percent');
    const raw = tableRows(table)[0].c[col]!.v as number;
    expect(raw).toBeLessThanOrEqual(1);
    expect(tableRows(opTableForDisplay(table))[0].c[col]!.v).toBeCloseTo(raw * 100, 3);
  });
});
