/**
 * Colours for charts, read from the page theme (CSS custom properties in app.css), so charts
 * follow light and dark mode. Series colours are fixed hues that read on both backgrounds; the
 * models pick them (`PALETTE`, `INPUT_RED` in models/chart-models.ts).
 */

export interface ChartTheme {
  text: string;
  muted: string;
  border: string;
  background: string;
  surface: string;
}

export const LIGHT_THEME: ChartTheme = {
  text: '#1d2330',
  muted: '#5b6472',
  border: '#d0d5dd',
  background: '#ffffff',
  surface: '#f6f7f9',
};

/** The theme as the element sees it (its inherited custom properties). */
export function readTheme(element: Element): ChartTheme {
  const style = getComputedStyle(element);
  const read = (name: string, fallback: string) => style.getPropertyValue(name).trim() || fallback;
  return {
    text: read('--pf-text', LIGHT_THEME.text),
    muted: read('--pf-muted', LIGHT_THEME.muted),
    border: read('--pf-border', LIGHT_THEME.border),
    background: read('--pf-bg', LIGHT_THEME.background),
    surface: read('--pf-surface', LIGHT_THEME.surface),
  };
}
