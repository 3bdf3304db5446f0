/**
 * Time ruler ticks and their labels. Tick steps are 1, 2 or 5 × 10^k so labels stay short;
 * labels are offsets from the trace start, in the unit that suits the largest offset in view and
 * with just the decimals the step needs (200 ns steps 1.2 ms into the trace read "1.2004 ms").
 *
 *   for (const tick of ticks(view, fullStartMs, 90)) drawTick(tick.x, tick.label);
 */
import { timeUnitFor } from '../format';
import { spanOf, timeToX, type Viewport } from './viewport';

export interface Tick {
  x: number;
  timeMs: number;
  label: string;
}


/** The smallest 1/2/5 × 10^k not below `raw`. */
export function niceStep(raw: number): number {
  if (!(raw > 0) || !Number.isFinite(raw)) return 1;
  const power = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 5, 10]) {
    if (m * power >= raw * (1 - 1e-9)) return m * power;
  }
  return 10 * power;
}

function decimalsFor(stepInUnit: number): number {
  if (stepInUnit >= 1) return 0;
  return Math.min(9, Math.ceil(-Math.log10(stepInUnit) - 1e-9));
}

/**
 * `valueMs` in the unit that suits `scaleMs` (the largest offset shown), with just enough
 * decimals to tell ticks `stepMs` apart.
 */
export function formatTickLabel(valueMs: number, stepMs: number, scaleMs = valueMs): string {
  if (valueMs === 0) return '0';
  const unit = timeUnitFor(Math.max(Math.abs(scaleMs), stepMs));
  const decimals = decimalsFor(stepMs / unit.ms);
  return `${(valueMs / unit.ms).toFixed(decimals)} ${unit.suffix}`;
}

/**
 * Ticks of `view` at least `minSpacingPx` apart, labelled relative to `originMs` (the trace
 * start), with ticks placed at whole multiples of the step from the origin.
 */
export function ticks(view: Viewport, originMs: number, minSpacingPx = 90): Tick[] {
  const span = spanOf(view);
  if (!(span > 0) || view.widthPx <= 0) return [];
  const step = niceStep((span * minSpacingPx) / view.widthPx);
  const first = Math.ceil((view.startMs - originMs) / step - 1e-9);
  const last = Math.floor((view.endMs - originMs) / step + 1e-9);
  const scale = Math.max(Math.abs(view.startMs - originMs), Math.abs(view.endMs - originMs));
  const out: Tick[] = [];
  for (let i = first; i <= last && out.length < 1000; i++) {
    const offset = i * step;
    const timeMs = originMs + offset;
    out.push({ x: timeToX(view, timeMs), timeMs, label: formatTickLabel(offset, step, scale) });
  }
  return out;
}
