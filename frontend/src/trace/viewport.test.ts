import { describe, expect, it } from 'vitest';
import { clampSpan, fitSpan, MIN_SPAN_MS, panBy, pixelMs, timeToX, xToTime, zoomAt, type Viewport } from './viewport';

const bounds = { startMs: 0, endMs: 1000 };

describe('time ↔ pixel', () => {
  const view: Viewport = { startMs: 100, endMs: 300, widthPx: 800 };
  it('maps the edges to 0 and the width', () => {
    expect(timeToX(view, 100)).toBe(0);
    expect(timeToX(view, 300)).toBe(800);
    expect(pixelMs(view)).toBe(0.25);
  });
  it('round-trips times and pixels, even deep in a long trace at ns zoom', () => {
    for (const x of [0, 1, 399.5, 800]) expect(timeToX(view, xToTime(view, x))).toBeCloseTo(x, 9);
    const deep: Viewport = { startMs: 3_600_000.000123, endMs: 3_600_000.000223, widthPx: 1500 };
    for (const x of [0, 7.25, 1500]) expect(timeToX(deep, xToTime(deep, x))).toBeCloseTo(x, 3);
  });
});

describe('zoom and pan', () => {
  it('keeps the time under the anchor in place', () => {
    const span = { startMs: 200, endMs: 600 };
    const next = zoomAt(span, 0.5, 0.25, bounds);
    expect(next.endMs - next.startMs).toBeCloseTo(200);
    expect(next.startMs + 0.25 * 200).toBeCloseTo(300);
  });
  it('never zooms out past the trace or in past the smallest span', () => {
    expect(zoomAt({ startMs: 0, endMs: 900 }, 4, 0.5, bounds)).toEqual(bounds);
    const tiny = zoomAt({ startMs: 10, endMs: 10.00001 }, 1e-6, 0.5, bounds);
    expect(tiny.endMs - tiny.startMs).toBeCloseTo(MIN_SPAN_MS, 12);
  });
  it('pans and stops at the edges', () => {
    expect(panBy({ startMs: 100, endMs: 200 }, 50, bounds)).toEqual({ startMs: 150, endMs: 250 });
    expect(panBy({ startMs: 100, endMs: 200 }, -500, bounds)).toEqual({ startMs: 0, endMs: 100 });
    expect(panBy({ startMs: 800, endMs: 900 }, 500, bounds)).toEqual({ startMs: 900, endMs: 1000 });
  });
  it('clamps bad spans into the trace', () => {
    expect(clampSpan({ startMs: -50, endMs: 5000 }, bounds)).toEqual(bounds);
    expect(clampSpan({ startMs: NaN, endMs: NaN }, bounds)).toEqual(bounds);
  });
  it('fits a target with margins, and instants with a minimum span', () => {
    const fit = fitSpan({ startMs: 400, endMs: 480 }, bounds, 0.1);
    expect(fit.endMs - fit.startMs).toBeCloseTo(100);
    expect((fit.startMs + fit.endMs) / 2).toBeCloseTo(440);
    const instant = fitSpan({ startMs: 500, endMs: 500 }, bounds);
    expect(instant.endMs - instant.startMs).toBeGreaterThan(0);
    expect((instant.startMs + instant.endMs) / 2).toBeCloseTo(500);
  });
});
