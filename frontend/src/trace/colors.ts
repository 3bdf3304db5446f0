/**
 * Event colours: a name hash picks one of a fixed set of hues, so the same op has the same
 * colour in every window and every session. Trailing numbers are ignored ("train 3" and
 * "train 4" match). Each theme has its own lightness so labels stay readable on both.
 */

export type ThemeName = 'light' | 'dark';

export const HUES = 24;

/** FNV-1a over UTF-16 code units. */
export function hashName(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) {
    h ^= name.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export function colorIndex(name: string): number {
  const stem = name.replace(/[\s_:#/-]*\d+$/, '');
  return hashName(stem || name) % HUES;
}

/** Fill colours per hue for a theme, and the text colour that reads on them. */
export interface Palette {
  fills: string[];
  text: string;
  merged: string;
  mergedStripe: string;
}

export function palette(theme: ThemeName): Palette {
  const fills: string[] = [];
  for (let i = 0; i < HUES; i++) {
    const hue = Math.round((i * 360) / HUES);
    // Alternate saturation so neighbouring hues differ a little more.
    const saturation = i % 2 ? 50 : 62;
    fills.push(theme === 'dark' ? `hsl(${hue} ${saturation}% 38%)` : `hsl(${hue} ${saturation}% 74%)`);
  }
  return theme === 'dark'
    ? { fills, text: '#f2f4f8', merged: '#4a505c', mergedStripe: '#6b7280' }
    : { fills, text: '#141821', merged: '#c4c8d0', mergedStripe: '#9aa0ab' };
}

/** A box is drawn hatched and grey when it stands for more than one event. */
export function isMergedBox(merged: number): boolean {
  return merged > 1;
}

/**
 * The label that fits in `widthPx` at about `charPx` per character: the whole name, a prefix
 * with an ellipsis, or '' when fewer than 3 characters would fit.
 */
export function fitLabel(name: string, widthPx: number, charPx: number, paddingPx = 6): string {
  const room = Math.floor((widthPx - paddingPx) / Math.max(charPx, 1));
  if (room >= name.length) return name;
  if (room < 3) return '';
  return name.slice(0, room - 1) + '…';
}
