/**
 * Shared by the XLA tool views: the module selector's data, and links from anything naming an
 * HLO op to the graph viewer. The op and module travel in the URL (`module_name`, `node_name`,
 * like `op_filter`: not view parameters, so they survive the switch to the graph viewer).
 */
import { html, type TemplateResult } from 'lit';
import type { ProfileApi } from '../api';
import { navigate } from '../components/dashboard-parts';

export const MODULE_PARAM = 'module_name';
export const OP_PARAM = 'node_name';

/** The session's programs, the one with the most XLA op time first (`order=time`). */
export async function moduleList(api: ProfileApi, run: string, signal?: AbortSignal): Promise<string[]> {
  const text = await api.getText('module_list', { run, order: 'time' }, signal);
  return text ? text.split(',').filter(Boolean) : [];
}

/**
 * The module to show first: the one in the URL (the user's choice), else the first listed —
 * `moduleList` lists the busiest program first.
 */
export function defaultModule(modules: readonly string[], wanted = ''): string {
  if (modules.includes(wanted)) return wanted;
  return modules[0] ?? '';
}

export function urlParam(name: string): string {
  return new URLSearchParams(window.location.search).get(name) ?? '';
}

export function setUrlParams(values: Record<string, string>): void {
  const params = new URLSearchParams(window.location.search);
  for (const [key, value] of Object.entries(values)) {
    if (value) params.set(key, value);
    else params.delete(key);
  }
  const search = params.toString();
  window.history.replaceState(window.history.state, '', window.location.pathname + (search ? '?' + search : ''));
}

export function graphHref(run: string, module: string, op: string): string {
  const params = new URLSearchParams({ run, tool: 'graph_viewer', [MODULE_PARAM]: module, [OP_PARAM]: op });
  return '?' + params.toString();
}

/** Switches to the graph viewer centred on `op` of `module`. */
export function openInGraphViewer(from: Element, module: string, op: string): void {
  setUrlParams({ [MODULE_PARAM]: module, [OP_PARAM]: op });
  navigate(from, 'graph_viewer');
}

/** A link that opens the op in the graph viewer (a real href, so a new tab works too). */
export function opLink(from: Element, run: string, module: string, op: string, label = op): TemplateResult {
  const onClick = (event: MouseEvent) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
    event.preventDefault();
    openInGraphViewer(from, module, op);
  };
  return html`<a class="op-link" href=${graphHref(run, module, op)} @click=${onClick} title="Show in the graph viewer">${label}</a>`;
}

export function moduleSelect(modules: readonly string[], value: string, onChange: (module: string) => void): TemplateResult {
  return html`<label
    >Module
    <select name="module_name" @change=${(e: Event) => onChange((e.target as HTMLSelectElement).value)}>
      ${modules.map((m) => html`<option .value=${m} ?selected=${m === value}>${m}</option>`)}
    </select></label
  >`;
}
