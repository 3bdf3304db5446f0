/**
 * Small per-view choices kept in the page URL next to run/tool/host (e.g. `memory_id`, `step`,
 * `idle`), so a deep link reopens the same view. They are replaced in place (no history entry)
 * and dropped by the shell when the run or tool changes (`VIEW_PARAM_KEYS`).
 */

// The trace viewer's window, selected event and tab too. `op_filter` is not one: it is set
// just before switching to TF stats ("show in TF stats") and must survive that switch.
export const VIEW_PARAM_KEYS = ['memory_id', 'step', 'idle', 'pipeline', 'start_ms', 'end_ms', 'event', 'trace_tab', 'group_by'] as const;
export type ViewParam = (typeof VIEW_PARAM_KEYS)[number];

export function readViewParam(key: ViewParam, search = window.location.search): string {
  return new URLSearchParams(search).get(key) ?? '';
}

export function withViewParam(search: string, key: ViewParam, value: string): string {
  const params = new URLSearchParams(search);
  if (value) params.set(key, value);
  else params.delete(key);
  const text = params.toString();
  return text ? '?' + text : '';
}

export function writeViewParam(key: ViewParam, value: string): void {
  const { pathname, search, hash } = window.location;
  const next = withViewParam(search, key, value);
  if (next !== search) window.history.replaceState(window.history.state, '', pathname + next + hash);
}

/** `search` without the view parameters (when the run or tool changes). */
export function withoutViewParams(search: string): string {
  const params = new URLSearchParams(search);
  for (const key of VIEW_PARAM_KEYS) params.delete(key);
  const text = params.toString();
  return text ? '?' + text : '';
}
