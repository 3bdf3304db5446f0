import { describe, expect, it } from 'vitest';
import { heldStep, keyAction, wheelZoomFactor, ZOOM_RATE, type HeldAction } from './keys';

describe('keys', () => {
  it('maps WASD, arrows and the commands', () => {
    expect(['w', 'S', 'a', 'ArrowRight', 'f', '0', 'm', '?', 'x'].map(keyAction)).toEqual([
      'zoom-in', 'zoom-out', 'pan-left', 'pan-right', 'fit', 'reset', 'mark', 'help', null,
    ]);
  });
  it('zooms and pans by elapsed time while keys are held', () => {
    const held = new Set<HeldAction>(['zoom-in', 'pan-right']);
    const step = heldStep(held, 1000 / 60);
    expect(step.zoom).toBeCloseTo(ZOOM_RATE ** (-1 / 60));
    expect(step.pan).toBeGreaterThan(0);
    // a long stall does not jump
    expect(heldStep(held, 5000).zoom).toBeCloseTo(ZOOM_RATE ** -0.1);
  });
  it('turns wheel deltas into zoom factors (down = out)', () => {
    expect(wheelZoomFactor(100, 0)).toBeGreaterThan(1);
    expect(wheelZoomFactor(-3, 1)).toBeLessThan(1);
    expect(wheelZoomFactor(0, 0)).toBe(1);
  });
});
