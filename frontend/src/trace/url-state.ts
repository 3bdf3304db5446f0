/**
 * The timeline's place in the page URL, beside run/tool/host (state.ts): the visible window
 * (`start_ms`, `end_ms` on the trace clock) and the selected event (`event`), so a shared link
 * opens the same view. Other parameters are kept as they are. Times are written to the
 * nanosecond, which is as fine as the timeline zooms.
 *
 *   const state = readTraceUrl(location.search);
 *   history.replaceState(history.state, '', location.pathname + writeTraceUrl(location.search, next));
 */

export interface TraceUrlState {
  startMs?: number;
  endMs?: number;
  event?: number;
  /** The open tab when it is not the tool's default (see `initialTab`). */
  tab?: string;
}

export const TRACE_URL_KEYS = ['start_ms', 'end_ms', 'event', 'trace_tab'] as const;

function finite(text: string | null): number | undefined {
  if (text === null || text.trim() === '') return undefined;
  const value = Number(text);
  return Number.isFinite(value) ? value : undefined;
}

export function readTraceUrl(search: string): TraceUrlState {
  const params = new URLSearchParams(search);
  const state: TraceUrlState = {};
  const start = finite(params.get('start_ms'));
  const end = finite(params.get('end_ms'));
  if (start !== undefined && end !== undefined && end > start) {
    state.startMs = start;
    state.endMs = end;
  }
  const event = finite(params.get('event'));
  if (event !== undefined && Number.isInteger(event) && event >= 0) state.event = event;
  const tab = params.get('trace_tab');
  if (tab) state.tab = tab;
  return state;
}

/** `ms` rounded to the nanosecond, without float noise ("12.5", not "12.500000000001"). */
export function msForUrl(ms: number): string {
  const rounded = Math.round(ms * 1e6) / 1e6;
  return String(Object.is(rounded, -0) ? 0 : rounded);
}

export function writeTraceUrl(search: string, state: TraceUrlState): string {
  const params = new URLSearchParams(search);
  const set = (key: string, value: string | undefined) => (value ? params.set(key, value) : params.delete(key));
  const hasWindow = state.startMs !== undefined && state.endMs !== undefined;
  set('start_ms', hasWindow ? msForUrl(state.startMs!) : undefined);
  set('end_ms', hasWindow ? msForUrl(state.endMs!) : undefined);
  set('event', state.event !== undefined ? String(state.event) : undefined);
  set('trace_tab', state.tab);
  const text = params.toString();
  return text ? '?' + text : '';
}

export type TraceTab = 'timeline' | 'summary';

/** The tab a tool opens on: the complete trace (`trace_viewer`) on its summary, `trace_viewer@` on the timeline. */
export function defaultTab(tool: string): TraceTab {
  return tool === 'trace_viewer' ? 'summary' : 'timeline';
}

/** The tab from the URL when it names one, else the tool's default. */
export function initialTab(tool: string, urlTab: string | undefined): TraceTab {
  return urlTab === 'summary' || urlTab === 'timeline' ? urlTab : defaultTab(tool);
}
