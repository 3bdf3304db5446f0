/**
 * The selection (run, tool, host) and its place in the page URL.
 *
 * The query string is the source of truth for deep links: `?run=R&tool=T&host=H`. Unknown
 * parameters are kept untouched when we rewrite the URL and otherwise ignored.
 */

export interface Selection {
  run: string;
  tool: string;
  host: string;
}

export const EMPTY_SELECTION: Selection = { run: '', tool: '', host: '' };

const KEYS = ['run', 'tool', 'host'] as const;

export function readSelection(search: string): Selection {
  const params = new URLSearchParams(search);
  return {
    run: params.get('run') ?? '',
    tool: params.get('tool') ?? '',
    host: params.get('host') ?? '',
  };
}

/** `search` with the selection written in; other parameters are preserved. */
export function writeSelection(search: string, selection: Selection): string {
  const params = new URLSearchParams(search);
  for (const key of KEYS) {
    if (selection[key]) params.set(key, selection[key]);
    else params.delete(key);
  }
  const text = params.toString();
  return text ? '?' + text : '';
}

export function sameSelection(a: Selection, b: Selection): boolean {
  return KEYS.every((key) => a[key] === b[key]);
}

/** `wanted` when the list offers it, else the first entry, else ''. */
export function pickOrFirst(options: readonly string[], wanted: string): string {
  if (wanted && options.includes(wanted)) return wanted;
  return options[0] ?? '';
}

/**
 * The run to select after a capture: the run of the captured `session` when the server named it,
 * else a run that appeared since `before`, the newest by name (session names are timestamps),
 * else the current one.
 */
export function pickNewestRun(before: readonly string[], after: readonly string[], current: string, session?: string): string {
  if (session) {
    const named = after.filter((run) => run === session || run.endsWith('/' + session));
    const fresh = named.find((run) => !before.includes(run));
    if (fresh ?? named[0]) return (fresh ?? named[0])!;
  }
  const known = new Set(before);
  const added = after.filter((run) => !known.has(run)).sort();
  if (added.length) return added[added.length - 1];
  return pickOrFirst(after, current);
}

/** How a tool name is shown: upstream marks some names with a trailing `@` or `^`. */
export function toolLabel(tool: string): string {
  return tool.replace(/[@^]+$/, '').replace(/_/g, ' ');
}
