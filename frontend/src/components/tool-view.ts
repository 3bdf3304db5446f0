/**
 * Shows the selected tool: fetches `data` (unless the view fetches its own), picks the view from
 * the registry, and shows a skeleton while loading, an info card for NOT_APPLICABLE, or an
 * error banner. A newer selection aborts the previous request.
 */
import { LitElement, css, html } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { ApiError, isAbortError, progressLine } from '../api';
import { toolLabel } from '../state';
import type { ToolContext, ToolViewElement } from '../views/contract';
import { viewForPayload, viewForTool } from '../views/registry';
import './loading-skeleton';
import './message-card';

const PROGRESS_POLL_MS = 500;

type Phase =
  | { kind: 'loading' }
  | { kind: 'ready'; element: ToolViewElement }
  | { kind: 'not-applicable'; message: string }
  | { kind: 'error'; code: string; message: string };

@customElement('pf-tool-view')
export class ToolView extends LitElement {
  @property({ attribute: false }) context: ToolContext | null = null;
  @state() private phase: Phase = { kind: 'loading' };
  /** What the server says it is doing while a large profile loads (decoding, converting). */
  @state() private progress = '';
  private abort: AbortController | null = null;
  private progressTimer: ReturnType<typeof setInterval> | null = null;

  static override styles = css`
    :host {
      display: block;
    }
    .progress {
      margin: 12px 0 0;
      color: var(--pf-muted, #666);
    }
  `;

  override willUpdate(changed: Map<PropertyKey, unknown>): void {
    if (changed.has('context')) void this.load();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.abort?.abort();
    this.stopProgress();
  }

  /** Polls the server's progress while a request is slow (a large profile being decoded). */
  private startProgress(context: ToolContext, signal: AbortSignal): void {
    this.stopProgress();
    this.progress = '';
    const poll = async () => {
      try {
        const reply = await context.api.progress(signal);
        if (!signal.aborted) this.progress = progressLine(reply, context.run, context.tool);
      } catch {
        // Progress is a nicety: an older server without the route just shows the skeleton.
      }
    };
    this.progressTimer = setInterval(() => void poll(), PROGRESS_POLL_MS);
  }

  private stopProgress(): void {
    if (this.progressTimer) clearInterval(this.progressTimer);
    this.progressTimer = null;
    this.progress = '';
  }

  override render() {
    const phase = this.phase;
    switch (phase.kind) {
      case 'loading':
        return html`${this.progress ? html`<p class="progress" role="status">${this.progress}</p>` : ''}
          <pf-skeleton label="Loading ${toolLabel(this.context?.tool ?? '')}"></pf-skeleton>`;
      case 'not-applicable':
        return html`<pf-message kind="info" heading="Nothing to show" .message=${phase.message}></pf-message>`;
      case 'error':
        return html`<pf-message
          kind="error"
          heading="Could not load ${toolLabel(this.context?.tool ?? '')}"
          .code=${phase.code}
          .message=${phase.message}
        ></pf-message>`;
      case 'ready':
        return phase.element;
    }
  }

  private async load(): Promise<void> {
    this.abort?.abort();
    const context = this.context;
    if (!context) return;
    const abort = new AbortController();
    this.abort = abort;
    this.phase = { kind: 'loading' };
    this.startProgress(context, abort.signal);
    try {
      const element = await createView(context, abort.signal);
      if (!abort.signal.aborted) this.phase = { kind: 'ready', element };
    } catch (error) {
      if (abort.signal.aborted || isAbortError(error)) return;
      this.phase = toErrorPhase(error);
    } finally {
      if (this.abort === abort) this.stopProgress();
    }
  }
}

/** Fetches the data (unless the view does) and builds the view element. */
export async function createView(context: ToolContext, signal: AbortSignal): Promise<ToolViewElement> {
  const toolView = viewForTool(context.tool);
  let data: unknown;
  let entry = toolView;
  if (!toolView?.ownData) {
    data = await context.api.toolData(context.run, context.tool, context.host, signal);
    entry = viewForPayload(data, toolView);
  }
  if (!entry) throw new ApiError(0, 'NO_VIEW', `No view can show ${context.tool}.`);
  const tag = await entry.load();
  const element = document.createElement(tag) as ToolViewElement;
  element.context = context;
  if (!entry.ownData) element.data = data;
  return element;
}

function toErrorPhase(error: unknown): Phase {
  if (error instanceof ApiError) {
    if (error.notApplicable) return { kind: 'not-applicable', message: error.message };
    return { kind: 'error', code: error.status ? `${error.status} ${error.code}` : error.code, message: error.message };
  }
  console.warn('Tool view failed', error);
  return { kind: 'error', code: 'CLIENT_ERROR', message: 'The page could not show this tool.' };
}

declare global {
  interface HTMLElementTagNameMap {
    'pf-tool-view': ToolView;
  }
}
