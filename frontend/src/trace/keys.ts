/**
 * Keyboard map of the timeline (the `?` overlay lists `KEY_HELP`). W/S and A/D are held keys
 * like in Perfetto and catapult: the component applies them every frame while they are down,
 * so zoom and pan speed do not depend on the key-repeat rate.
 */

export type HeldAction = 'zoom-in' | 'zoom-out' | 'pan-left' | 'pan-right';
export type KeyAction = HeldAction | 'fit' | 'reset' | 'mark' | 'help' | 'escape' | 'scroll-up' | 'scroll-down';

export function keyAction(key: string): KeyAction | null {
  switch (key) {
    case 'w':
    case 'W':
      return 'zoom-in';
    case 's':
    case 'S':
      return 'zoom-out';
    case 'a':
    case 'A':
    case 'ArrowLeft':
      return 'pan-left';
    case 'd':
    case 'D':
    case 'ArrowRight':
      return 'pan-right';
    case 'ArrowUp':
      return 'scroll-up';
    case 'ArrowDown':
      return 'scroll-down';
    case 'f':
    case 'F':
      return 'fit';
    case '0':
      return 'reset';
    case 'm':
    case 'M':
      return 'mark';
    case '?':
      return 'help';
    case 'Escape':
      return 'escape';
    default:
      return null;
  }
}

export function isHeld(action: KeyAction): action is HeldAction {
  return action === 'zoom-in' || action === 'zoom-out' || action === 'pan-left' || action === 'pan-right';
}

/** Zoom factor per second while W/S is held (span shrinks to 1/ZOOM_RATE in a second). */
export const ZOOM_RATE = 6;
/** Fraction of the view panned per second while A/D is held. */
export const PAN_RATE = 1.2;

/**
 * The span factor and pan fraction for held actions over `dtMs`: W/S multiply the span by
 * ZOOM_RATE^(∓dt), A/D move by PAN_RATE·dt of the view.
 */
export function heldStep(held: ReadonlySet<HeldAction>, dtMs: number): { zoom: number; pan: number } {
  const dt = Math.min(dtMs, 100) / 1000;
  let zoom = 1;
  let pan = 0;
  if (held.has('zoom-in')) zoom /= ZOOM_RATE ** dt;
  if (held.has('zoom-out')) zoom *= ZOOM_RATE ** dt;
  if (held.has('pan-left')) pan -= PAN_RATE * dt;
  if (held.has('pan-right')) pan += PAN_RATE * dt;
  return { zoom, pan };
}

/** Wheel zoom: ctrl+wheel or a trackpad pinch (which Chromium sends as ctrl+wheel). */
export function wheelZoomFactor(deltaY: number, deltaMode: number): number {
  const pixels = deltaMode === 1 ? deltaY * 16 : deltaMode === 2 ? deltaY * 400 : deltaY;
  return Math.exp(Math.max(-300, Math.min(300, pixels)) * 0.004);
}

export const KEY_HELP: readonly [string, string][] = [
  ['W / S', 'zoom in / out (at the mouse)'],
  ['Ctrl + wheel, pinch', 'zoom at the mouse'],
  ['A / D, ← / →', 'pan left / right'],
  ['drag', 'pan (and scroll the rows)'],
  ['wheel, ↑ / ↓', 'scroll the rows'],
  ['Shift + wheel', 'pan'],
  ['click', 'select an event (details below)'],
  ['Shift + drag', 'select a time range (statistics below)'],
  ['M', 'mark the selected event as the range'],
  ['F', 'fit the selection (event or range)'],
  ['0', 'reset to the whole trace'],
  ['Enter / Shift + Enter', 'next / previous search match'],
  ['Esc', 'clear the selection, close this help'],
  ['?', 'show or hide this help'],
];
