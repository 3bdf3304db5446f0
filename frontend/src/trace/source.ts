/**
 * Where the timeline gets its data: the three `trace_viewer@` questions (docs/trace_viewer.md)
 * as functions, so the model can be tested with a stub and the view passes the real API.
 *
 *   const source = apiTraceSource(api, run, host);
 *   const win = await source.window({ startMs, endMs, resolution: 1500 }, signal);
 */
import { ApiError, type ProfileApi, type QueryParams } from '../api';
import { msForUrl } from './url-state';
import {
  decodeSearch,
  decodeWindow,
  isWindowAnswer,
  type DetailsAnswer,
  type SearchAnswer,
  type SearchMatch,
  type TraceWindow,
  type WindowRequest,
} from './contract';

export const WINDOW_TOOL = 'trace_viewer@';
/** Items per answer: enough for ~100 rows × 1500 px of unmerged events, small enough to parse fast. */
export const MAX_EVENTS = 100_000;
export const MAX_SEARCH_RESULTS = 1000;

export interface SearchResult {
  query: string;
  matches: SearchMatch[];
  total: number;
  truncated: boolean;
}

export interface TraceSource {
  window(request: WindowRequest, signal: AbortSignal): Promise<TraceWindow>;
  search(query: string, signal: AbortSignal): Promise<SearchResult>;
  details(event: number, signal: AbortSignal): Promise<DetailsAnswer>;
}

/** Query parameters of a window request; the whole trace when start and end are absent. */
export function windowParams(request: Partial<WindowRequest>): QueryParams {
  const params: QueryParams = { format: 'columnar', resolution: Math.max(0, Math.round(request.resolution ?? 0)) };
  if (Number.isFinite(request.startMs) && Number.isFinite(request.endMs)) {
    params.start_time_ms = msForUrl(request.startMs!);
    params.end_time_ms = msForUrl(request.endMs!);
  }
  if (request.pids) params.pids = request.pids.join(',');
  if (request.tids) params.tids = request.tids.join(',');
  params.max_events = request.maxEvents ?? MAX_EVENTS;
  return params;
}

export function apiTraceSource(api: ProfileApi, run: string, host: string): TraceSource {
  const base = { run, tag: WINDOW_TOOL, host: host || undefined };
  return {
    async window(request, signal) {
      const answer = await api.getJson<unknown>('data', { ...base, ...windowParams(request) }, signal);
      if (!isWindowAnswer(answer)) throw new ApiError(0, 'BAD_RESPONSE', 'The server did not answer with a trace window.');
      return decodeWindow(answer, request);
    },
    async search(query, signal) {
      const answer = await api.getJson<SearchAnswer>('data', { ...base, search: query, max_results: MAX_SEARCH_RESULTS }, signal);
      return { query, matches: decodeSearch(answer), total: Number(answer.total) || 0, truncated: !!answer.truncated };
    },
    details(event, signal) {
      return api.getJson<DetailsAnswer>('data', { ...base, details: event }, signal);
    },
  };
}
