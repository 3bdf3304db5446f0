/**
 * HTTP client for the plugin routes (docs/http_api.md) and the types of their answers.
 *
 * Every route lives under one base path: the part of `location.pathname` up to and including
 * `/data/plugin/profile/` (TensorBoard, any --path_prefix), or `/data/plugin/profile/` when the
 * page is served from `/` by the standalone server.
 *
 *   const api = new ProfileApi(apiBaseFromPath(location.pathname));
 *   const runs = await api.runs();
 *
 * Every route is a GET except `capture_profile`: a capture is a POST carrying the server's token
 * (read from `capture_token`, which only a page of the server's own origin can read) in the
 * `X-TBProf-Token` header, so that pages of other sites cannot start one (docs/security.md).
 *
 * A live page's access token (access-token.ts), when given, goes into the query string of every
 * request, `capture_token` and the capture's POST included: the live server wants both tokens.
 */

import { TOKEN_PARAM } from './access-token';

export const PLUGIN_PATH = '/data/plugin/profile/';
/** The header `capture_profile` requires, holding the token `capture_token` answers. */
export const TOKEN_HEADER = 'X-TBProf-Token';

export interface HostEntry {
  hostname: string;
}

export interface ProfileConfig {
  hideCaptureProfileButton?: boolean;
  enableTabNameLabel?: boolean;
  srcPathPrefix?: string | null;
  /** Problems the server found with its installation (e.g. a conflicting plugin). */
  warnings?: string[];
  /** Set when the page is served from inside a training script (live.serve): what to capture. */
  live?: LiveInfo;
}

export interface LiveInfo {
  service_addr: string;
  framework: string;
  pid: number;
}

/** One conversion in flight on the server. */
export interface ProgressTask {
  run: string;
  tool: string;
  stage: string;
  elapsed_s: number;
}

export interface ProgressReply {
  tasks: ProgressTask[];
}

/** The line shown while a tool loads: the server's stage for this run and tool, if any. */
export function progressLine(reply: ProgressReply | null, run: string, tool: string): string {
  const task = reply?.tasks?.find((t) => t.run === run && t.tool === tool);
  return task ? `${task.stage} · ${task.elapsed_s.toFixed(1)} s` : '';
}

/** Reply of `capture_profile`: HTTP 200 with either key. */
export interface CaptureReply {
  result?: string;
  error?: string;
}

/** Reply of `capture_status?job=`: epoch seconds; `result`/`error` once finished. */
export interface CaptureStatus {
  job?: string;
  state?: 'running' | 'done' | 'failed' | 'cancelled';
  phase?: 'waiting' | 'tracing' | 'collecting' | 'writing' | 'cancelling' | 'cancelled' | string;
  started_at?: number;
  expected_end?: number;
  result?: string;
  error?: string;
  session?: string;
}

/** Reply of `diagnose`: what is under the log directory and why it was not read. */
export interface Diagnosis {
  exists: boolean;
  logdir: string;
  sessions: number;
  skipped: string[];
  other_files: string[];
  /** Folders the server may not read, relative to the logdir, each with the reason. */
  unreadable?: string[];
}

export type QueryParams = Record<string, string | number | boolean | undefined>;

/** Error code the backend uses for "this tool has nothing to show here". */
export const NOT_APPLICABLE = 'NOT_APPLICABLE';

/** A failed request: HTTP status plus the backend's code and a message safe to show. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  get notApplicable(): boolean {
    return this.code === NOT_APPLICABLE;
  }
}

/** The API base for a page at `pathname`. */
export function apiBaseFromPath(pathname: string): string {
  const at = pathname.indexOf(PLUGIN_PATH);
  if (at >= 0) return pathname.slice(0, at + PLUGIN_PATH.length);
  const bare = PLUGIN_PATH.slice(0, -1);
  if (pathname.endsWith(bare)) return pathname + '/';
  return PLUGIN_PATH;
}

/** The parameters that are set, form-encoded (undefined values are skipped). */
export function formParams(params: QueryParams): URLSearchParams {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined) query.set(key, String(value));
  }
  return query;
}

/** `base + route + ?query`, skipping undefined values. */
export function routeUrl(base: string, route: string, params: QueryParams = {}): string {
  const text = formParams(params).toString();
  return base + route + (text ? '?' + text : '');
}

const MAX_MESSAGE_CHARS = 500;

/**
 * Turns an error body into code + message. Accepts the JSON shape
 * `{"error": {"code", "message"}}`, `{"error": "..."}`, and plain text.
 */
export function parseErrorBody(status: number, body: string): ApiError {
  const fallbackCode = `HTTP_${status}`;
  const trimmed = body.trim();
  try {
    const parsed: unknown = JSON.parse(trimmed);
    if (parsed && typeof parsed === 'object' && 'error' in parsed) {
      const error = (parsed as { error: unknown }).error;
      if (typeof error === 'string') return new ApiError(status, fallbackCode, clip(error));
      if (error && typeof error === 'object') {
        const { code, message } = error as { code?: unknown; message?: unknown };
        return new ApiError(
          status,
          typeof code === 'string' && code ? code : fallbackCode,
          clip(typeof message === 'string' ? message : JSON.stringify(error)),
        );
      }
    }
  } catch {
    // Not JSON: a plain-text error body.
  }
  // An HTML error page (e.g. a WSGI server's default 500): show its title, not the markup.
  const title = /^<!doctype html|^<html/i.test(trimmed) ? /<title>([^<]*)<\/title>/i.exec(trimmed)?.[1]?.trim() : undefined;
  return new ApiError(status, fallbackCode, clip(title || trimmed || `Request failed with status ${status}`));
}

function clip(text: string): string {
  return text.length > MAX_MESSAGE_CHARS ? text.slice(0, MAX_MESSAGE_CHARS) + '…' : text;
}

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

export class ProfileApi {
  /** `token`: the live page's access token (access-token.ts), sent with every request. */
  constructor(
    readonly base: string,
    private readonly fetchImpl: FetchLike = (input, init) => fetch(input, init),
    private readonly token?: string,
  ) {}

  url(route: string, params: QueryParams = {}): string {
    return routeUrl(this.base, route, this.token ? { ...params, [TOKEN_PARAM]: this.token } : params);
  }

  async getText(route: string, params: QueryParams = {}, signal?: AbortSignal): Promise<string> {
    const response = await this.request(route, params, signal);
    return response.text();
  }

  async getJson<T>(route: string, params: QueryParams = {}, signal?: AbortSignal): Promise<T> {
    return this.readJson<T>(route, await this.request(route, params, signal));
  }

  /** POSTs `params` as a form to a route that changes something, with the server's token. */
  async postJson<T>(route: string, params: QueryParams = {}, signal?: AbortSignal): Promise<T> {
    const { token } = await this.getJson<{ token?: unknown }>('capture_token', {}, signal);
    const init = { method: 'POST', body: formParams(params), headers: { [TOKEN_HEADER]: String(token ?? '') } };
    return this.readJson<T>(route, await this.request(route, {}, signal, init));
  }

  private async readJson<T>(route: string, response: Response): Promise<T> {
    const text = await response.text();
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new ApiError(response.status, 'BAD_RESPONSE', `The server sent invalid JSON for ${route}.`);
    }
  }

  runs(signal?: AbortSignal): Promise<string[]> {
    return this.getJson<string[]>('runs', {}, signal).then(stringList);
  }

  runTools(run: string, signal?: AbortSignal): Promise<string[]> {
    return this.getJson<string[]>('run_tools', { run }, signal).then(stringList);
  }

  async hosts(run: string, tool: string, signal?: AbortSignal): Promise<string[]> {
    const entries = await this.getJson<unknown>('hosts', { run, tag: tool }, signal);
    if (!Array.isArray(entries)) return [];
    // Before 2024-10 hosts were plain strings; accept both.
    return entries
      .map((entry: unknown) =>
        typeof entry === 'string' ? entry : (entry as Partial<HostEntry> | null)?.hostname,
      )
      .filter((name): name is string => typeof name === 'string');
  }

  config(signal?: AbortSignal): Promise<ProfileConfig> {
    return this.getJson<ProfileConfig>('config', {}, signal);
  }

  toolData(run: string, tool: string, host: string, signal?: AbortSignal): Promise<unknown> {
    return this.getJson<unknown>('data', dataParams(run, tool, host), signal);
  }

  dataUrl(run: string, tool: string, host: string): string {
    return this.url('data', dataParams(run, tool, host));
  }

  /** CSV of table `table` of a multi-table payload (the server's default is the first non-empty). */
  csvUrl(run: string, tool: string, host: string, table?: number): string {
    return this.url('data_csv', { ...dataParams(run, tool, host), table });
  }

  /** Conversions the server is working on (`progress` route), for the loading display. */
  progress(signal?: AbortSignal): Promise<ProgressReply> {
    return this.getJson<ProgressReply>('progress', {}, signal);
  }

  diagnose(signal?: AbortSignal): Promise<Diagnosis> {
    return this.getJson<Diagnosis>('diagnose', {}, signal);
  }

  /**
   * Starts a capture with `async=1`: `{job}` at once. A backend without async capture answers
   * `{result}` or `{error}` when the capture is over; both shapes are returned as they are.
   */
  async captureAsync(params: QueryParams, signal?: AbortSignal): Promise<CaptureReply & { job?: string }> {
    try {
      return await this.postJson<CaptureReply & { job?: string }>('capture_profile', { ...params, async: 1 }, signal);
    } catch (error) {
      if (error instanceof ApiError) return { error: error.message };
      throw error;
    }
  }

  captureStatus(job: string, signal?: AbortSignal): Promise<CaptureStatus> {
    return this.getJson<CaptureStatus>('capture_status', { job }, signal);
  }

  /**
   * Stops a running capture (`capture_cancel`, a POST with the capture token like the capture
   * itself): its status, `state: 'cancelled'` once the server has stopped it. A refusal or an
   * unknown job comes back as `{error}`.
   */
  async captureCancel(job: string, signal?: AbortSignal): Promise<CaptureStatus> {
    try {
      return await this.postJson<CaptureStatus>('capture_cancel', { job }, signal);
    } catch (error) {
      if (error instanceof ApiError) return { error: error.message };
      throw error;
    }
  }

  /** Capture answers 200 with `{result}` or `{error}`; a non-2xx reply is folded into `{error}`. */
  async capture(params: QueryParams, signal?: AbortSignal): Promise<CaptureReply> {
    try {
      return await this.postJson<CaptureReply>('capture_profile', params, signal);
    } catch (error) {
      if (error instanceof ApiError) return { error: error.message };
      throw error;
    }
  }

  private async request(route: string, params: QueryParams, signal?: AbortSignal, init: RequestInit = {}): Promise<Response> {
    let response: Response;
    try {
      response = await this.fetchImpl(this.url(route, params), { ...init, signal, credentials: 'same-origin' });
    } catch (error) {
      if (error instanceof DOMException && error.name === 'AbortError') throw error;
      throw new ApiError(0, 'NETWORK_ERROR', `Could not reach the server (${route}).`);
    }
    if (!response.ok) throw parseErrorBody(response.status, await response.text());
    return response;
  }
}

function dataParams(run: string, tool: string, host: string): QueryParams {
  return { run, tag: tool, host: host || undefined };
}

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

export function isAbortError(error: unknown): boolean {
  return error instanceof DOMException && error.name === 'AbortError';
}
