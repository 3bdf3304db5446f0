/**
 * The contract between the shell and a tool view, kept in a leaf module so that views never
 * import the registry that loads them (which would close an import cycle through every view).
 */
import type { ProfileApi } from '../api';

/** What a view gets from the shell. */
export interface ToolContext {
  api: ProfileApi;
  run: string;
  tool: string;
  host: string;
  /** The run's tools (for links between dashboards). */
  tools?: readonly string[];
}

/** Event a view fires to switch the tool selector (the shell handles it). */
export const NAVIGATE_EVENT = 'pf-navigate';

export interface NavigateDetail {
  tool: string;
  /** Also switch to this host (the trace viewer's host choice). */
  host?: string;
}

/** The element a view defines: the shell sets `context` and, unless `ownData`, `data`. */
export interface ToolViewElement extends HTMLElement {
  context: ToolContext;
  data?: unknown;
}
