import { describe, expect, it } from 'vitest';
import { colorIndex, fitLabel, HUES, isMergedBox, palette } from './colors';

describe('colours', () => {
  it('are stable per name and ignore trailing numbers', () => {
    expect(colorIndex('MatMul')).toBe(colorIndex('MatMul'));
    expect(colorIndex('train 3')).toBe(colorIndex('train 4'));
    expect(colorIndex('fusion.1')).toBeLessThan(HUES);
  });
  it('spread common names over several hues', () => {
    const names = ['MatMul', 'Relu', 'Conv2D', 'BiasAdd', 'Softmax', 'AddV2', 'Mul', 'Sub', 'Transpose', 'Reshape'];
    expect(new Set(names.map(colorIndex)).size).toBeGreaterThanOrEqual(6);
  });
  it('have one fill per hue in both themes', () => {
    expect(palette('light').fills).toHaveLength(HUES);
    expect(palette('dark').fills[0]).not.toBe(palette('light').fills[0]);
  });
});

describe('box drawing decisions', () => {
  it('hatches boxes of more than one event', () => {
    expect(isMergedBox(1)).toBe(false);
    expect(isMergedBox(2)).toBe(true);
  });
  it('labels a box only when a few characters fit', () => {
    expect(fitLabel('MatMul', 100, 7)).toBe('MatMul');
    expect(fitLabel('ThunkExecutor::Execute', 60, 7)).toBe('ThunkE…');
    expect(fitLabel('MatMul', 20, 7)).toBe('');
  });
});
