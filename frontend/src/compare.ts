/**
 * Comparing the selected run (the experiment) with a baseline run (docs/compare.md): the
 * baseline's place in the URL (`base_run`, kept when the tool changes) and how the page shows
 * the server's comparison table (`data?base_run=`): which columns first, the summary line.
 * The server decides which tools can be compared and says so, naming those that can.
 */
import type { DataTable } from './table/datatable';

export const BASE_RUN_PARAM = 'base_run';

export function readBaseRun(search: string): string {
  return new URLSearchParams(search).get(BASE_RUN_PARAM) ?? '';
}

/** `search` with the baseline written in (or removed when ''); other parameters kept. */
export function withBaseRun(search: string, baseRun: string): string {
  const params = new URLSearchParams(search);
  if (baseRun) params.set(BASE_RUN_PARAM, baseRun);
  else params.delete(BASE_RUN_PARAM);
  const text = params.toString();
  return text ? '?' + text : '';
}

/** The baseline choices: "none" first, then every run but the selected one. */
export function baseRunOptions(runs: readonly string[], run: string): { value: string; label: string }[] {
  return [{ value: '', label: '(none)' }, ...runs.filter((r) => r !== run).map((r) => ({ value: r, label: r }))];
}

function listProperty(table: DataTable, name: string): string[] {
  const value = table.p?.[name];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** The columns shown first: the keys, the status, and the first value's four columns. */
export function compareColumns(table: DataTable): string[] {
  const keys = listProperty(table, 'keys');
  const first = listProperty(table, 'values')[0];
  const values = first ? ['base', 'exp', 'delta', 'delta_pct'].map((s) => `${first}_${s}`) : [];
  const known = new Set(table.cols.map((c) => c.id ?? ''));
  return [...keys, 'status', ...values].filter((id) => known.has(id));
}

/**
 * The headers: the server's readable label ("Device self (us) — baseline"); for an answer
 * without one (the label is the id), the id in words: "total_self_time_us_delta_pct" reads
 * "total self time — Δ%".
 */
export function compareLabels(table: DataTable): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const { id, label } of table.cols) {
    if (!id) continue;
    labels[id] =
      label && label !== id
        ? label
        : id
            .replace(/_delta_pct$/, ' — Δ%')
            .replace(/_delta$/, ' — Δ')
            .replace(/_base$/, ' — baseline')
            .replace(/_exp$/, ' — experiment')
            .replace(/_(us|ms|bytes)(?= —|$)/, ' ($1)')
            .replace(/ \((us|ms|bytes)\)(?= — Δ%$)/, '') // a share has no unit
            .replace(/_/g, ' ');
  }
  return labels;
}

/** The tools whose comparison takes a scope (docs/compare.md), and the scopes. */
export const SCOPED_TOOLS: readonly string[] = ['pytorch_operators'];
export const SCOPE_OPTIONS = [
  { value: 'all', label: 'Every thread' },
  { value: 'main_thread_steps', label: 'Step thread, in steps (torch-tb diff)' },
];

/** The baseline host choices when the baseline has several hosts: all of them, or one. */
export function baseHostOptions(hosts: readonly string[]): { value: string; label: string }[] {
  return [{ value: '', label: '(all hosts)' }, ...hosts.map((h) => ({ value: h, label: h }))];
}

export function compareSummary(table: DataTable): string {
  const summary = table.p?.summary;
  return typeof summary === 'string' ? summary : '';
}
