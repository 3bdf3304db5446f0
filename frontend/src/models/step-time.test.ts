import { describe, expect, it } from 'vitest';
import { stepTimeModel } from './step-time';

describe('stepTimeModel', () => {
  const table = (stepMs: number) => ({
    cols: [
      { id: 'stepnum', label: 'Step', type: 'string' },
      { id: 'computeTimeMs', label: 'Compute', type: 'number' },
      { id: 'inputTimeMs', label: 'Input', type: 'number' },
      { id: 'stepTimeMs', label: 'Step time', type: 'number' },
    ],
    rows: [{ c: [{ v: '1' }, { v: 81.1 }, { v: 10 }, { v: stepMs }] }],
    p: { steptime_ms_average: String(stepMs) },
  });

  it('shows the part of the step no component covers, so the shares add to 100% (issue 28)', () => {
    const model = stepTimeModel(table(100));
    const shares = model.components.map((c) => c.percent);
    expect(shares.reduce((a, b) => a + b, 0)).toBeCloseTo(100, 6);
    expect(model.components.at(-1)?.label).toBe('Other (not in any component)');
    expect(model.components.at(-1)?.averageMs).toBeCloseTo(8.9, 6);
  });

  it('adds no remainder when the components cover the step', () => {
    const model = stepTimeModel(table(91.1));
    expect(model.components.map((c) => c.id)).toEqual(['computeTimeMs', 'inputTimeMs']);
  });
});
