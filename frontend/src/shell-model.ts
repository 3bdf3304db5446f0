/**
 * The app shell's model: the run/tool/host lists, the current selection, and the page URL.
 *
 * `resolve(wanted)` walks runs → tools → hosts, loading each list only when its key changed, and
 * picks the wanted entry or the first one. A newer call supersedes an older one (its requests are
 * aborted and its late answers ignored). Views subscribe with `onChange`.
 *
 *   const model = new ShellModel(api, window);
 *   model.onChange = () => element.requestUpdate();
 *   await model.start();
 */
import { ApiError, isAbortError, type ProfileApi, type ProfileConfig } from './api';
import {
  EMPTY_SELECTION,
  pickNewestRun,
  pickOrFirst,
  readSelection,
  sameSelection,
  writeSelection,
  type Selection,
} from './state';
import { withoutViewParams } from './view-params';

export type ShellPhase = 'loading' | 'no-runs' | 'no-tools' | 'ready' | 'error';
export type HistoryMode = 'push' | 'replace';

/** The parts of `window` the model uses; tests pass a fake. */
export interface PageLocation {
  location: { search: string; pathname: string; hash: string };
  history: Pick<History, 'pushState' | 'replaceState'>;
}

export class ShellModel {
  config: ProfileConfig = {};
  runs: string[] | null = null;
  tools: string[] | null = null;
  hosts: string[] | null = null;
  selection: Selection = EMPTY_SELECTION;
  phase: ShellPhase = 'loading';
  error: ApiError | null = null;
  /** Something the user asked for that is not shown (a link to an unknown run). */
  notice = '';
  /** Which list is loading right now, for spinners on the selectors. */
  loading: 'runs' | 'tools' | 'hosts' | null = null;
  onChange: () => void = () => {};

  private toolsKey = '';
  private hostsKey = '';
  private generation = 0;
  private abort: AbortController | null = null;

  constructor(
    private readonly api: ProfileApi,
    private readonly page: PageLocation,
  ) {}

  async start(): Promise<void> {
    void this.loadConfig();
    await this.resolve(readSelection(this.page.location.search), 'replace', true, true);
  }

  /** After back/forward: follow the URL. */
  followUrl(): Promise<void> {
    return this.resolve(readSelection(this.page.location.search), 'replace', false, true);
  }

  selectRun(run: string): Promise<void> {
    return this.resolve({ run, tool: this.selection.tool, host: '' }, 'push', false);
  }

  selectTool(tool: string): Promise<void> {
    return this.resolve({ ...this.selection, tool }, 'push', false);
  }

  selectHost(host: string): Promise<void> {
    return this.resolve({ ...this.selection, host }, 'push', false);
  }

  /** After a capture: reload the runs and select the one that appeared (the named session if given). */
  async reloadRunsAndSelectNewest(session?: string): Promise<void> {
    const before = this.runs ?? [];
    let after: string[];
    try {
      after = await this.api.runs();
    } catch {
      return this.resolve(this.selection, 'push', true);
    }
    const run = pickNewestRun(before, after, this.selection.run, session);
    this.runs = after;
    return this.resolve({ run, tool: run === this.selection.run ? this.selection.tool : '', host: '' }, 'push', false);
  }

  /** Live pages: pick up sessions saved meanwhile (e.g. captured by the script itself). */
  async refreshRuns(): Promise<void> {
    let after: string[];
    try {
      after = await this.api.runs();
    } catch {
      return;
    }
    const before = this.runs ?? [];
    if (after.length === before.length && after.every((run, i) => run === before[i])) return;
    if (this.phase === 'no-runs' || !this.selection.run) return this.resolve(this.selection, 'replace', true);
    this.runs = after;
    this.changed();
  }

  /** `fromLink`: the wanted selection comes from the address (say what of it is not here). */
  async resolve(wanted: Selection, mode: HistoryMode, reloadRuns: boolean, fromLink = false): Promise<void> {
    const generation = ++this.generation;
    this.abort?.abort();
    const abort = new AbortController();
    this.abort = abort;
    const current = () => generation === this.generation;
    try {
      await this.walk(wanted, mode, reloadRuns, abort.signal, current, fromLink);
    } catch (error) {
      if (!current() || isAbortError(error)) return;
      this.error =
        error instanceof ApiError ? error : new ApiError(0, 'CLIENT_ERROR', 'Something went wrong in the page.');
      if (!(error instanceof ApiError)) console.warn(error);
      this.phase = 'error';
      this.loading = null;
      this.changed();
    }
  }

  private async walk(
    wanted: Selection,
    mode: HistoryMode,
    reloadRuns: boolean,
    signal: AbortSignal,
    current: () => boolean,
    fromLink: boolean,
  ): Promise<void> {
    this.error = null;
    if (reloadRuns || this.runs === null) {
      this.step('runs', { ...wanted });
      this.runs = await this.api.runs(signal);
      if (!current()) return;
    }
    if (this.runs.length === 0) return this.finish('no-runs', EMPTY_SELECTION, mode);
    const run = pickOrFirst(this.runs, wanted.run);
    // A link to a run that is not (or no longer) here: say so rather than show another silently.
    this.notice = wanted.run && run !== wanted.run ? `Run "${wanted.run}" was not found in the log directory; showing ${run}.` : '';

    if (this.toolsKey !== run || this.tools === null) {
      this.step('tools', { run, tool: wanted.tool, host: wanted.host });
      this.tools = null;
      this.hosts = null;
      this.tools = await this.api.runTools(run, signal);
      if (!current()) return;
      this.toolsKey = run;
    }
    if (this.tools.length === 0) return this.finish('no-tools', { run, tool: '', host: '' }, mode);
    const tool = pickOrFirst(this.tools, wanted.tool);

    const hostsKey = JSON.stringify([run, tool]);
    if (this.hostsKey !== hostsKey || this.hosts === null) {
      this.step('hosts', { run, tool, host: wanted.host });
      this.hosts = null;
      this.hosts = await this.api.hosts(run, tool, signal);
      if (!current()) return;
      this.hostsKey = hostsKey;
    }
    const host = pickOrFirst(this.hosts, wanted.host);
    if (fromLink && !this.notice) this.notice = notFoundBelowRun(wanted, { run, tool, host });
    this.finish('ready', { run, tool, host }, mode);
  }

  private step(loading: 'runs' | 'tools' | 'hosts', selection: Selection): void {
    this.loading = loading;
    this.phase = 'loading';
    this.selection = selection;
    this.changed();
  }

  private finish(phase: ShellPhase, selection: Selection, mode: HistoryMode): void {
    this.phase = phase;
    this.loading = null;
    this.selection = selection;
    this.writeUrl(mode);
    this.changed();
  }

  private writeUrl(mode: HistoryMode): void {
    const { location, history } = this.page;
    const before = readSelection(location.search);
    if (sameSelection(before, this.selection)) return;
    // View choices (memory id, step, …) belong to one tool of one run.
    const keepView = before.run === this.selection.run && before.tool === this.selection.tool;
    const search = keepView ? location.search : withoutViewParams(location.search);
    const url = location.pathname + writeSelection(search, this.selection) + location.hash;
    if (mode === 'push') history.pushState(null, '', url);
    else history.replaceState(null, '', url);
  }

  private async loadConfig(): Promise<void> {
    try {
      this.config = await this.api.config();
      this.changed();
    } catch {
      // An older backend without /config: keep the defaults (capture button shown).
    }
  }

  private changed(): void {
    this.onChange();
  }
}

/**
 * What a link asked for below the run that is not here (a tool without data for this run, a
 * host of another run), and what is shown instead; '' when both were found.
 */
export function notFoundBelowRun(wanted: Selection, shown: Selection): string {
  if (wanted.run && wanted.run !== shown.run) return ''; // the run's own notice says it
  if (wanted.tool && wanted.tool !== shown.tool) {
    return `The link's tool "${wanted.tool}" has no data for run ${shown.run}; showing ${shown.tool}.`;
  }
  if (wanted.host && wanted.host !== shown.host) {
    return `The link's host "${wanted.host}" is not in run ${shown.run}; showing ${shown.host || 'all hosts'}.`;
  }
  return '';
}
