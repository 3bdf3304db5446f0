/**
 * The app shell: header with run / tool / host selectors and the Capture button, and the main
 * area showing the selected tool, an empty state, or an error. State lives in ShellModel; this
 * element only renders it and forwards user choices.
 */
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property, query } from 'lit/decorators.js';
import type { ProfileApi } from '../api';
import { baseRunOptions, readBaseRun, withBaseRun } from '../compare';
import { ShellModel } from '../shell-model';
import { toolLabel } from '../state';
import { NAVIGATE_EVENT, type NavigateDetail, type ToolContext } from '../views/contract';
import './capture-dialog';
import './compare-view';
import './copy-link';
import './diagnosis-card';
import './live-steps';
import type { CaptureDialog } from './capture-dialog';
import './loading-skeleton';
import './message-card';
import './select-field';
import { controlStyles } from './shared-styles';
import './tool-view';

const LIVE_REFRESH_MS = 3000;

@customElement('pf-app')
export class AppShell extends LitElement {
  @property({ attribute: false }) api!: ProfileApi;
  @query('pf-capture-dialog') private captureDialog!: CaptureDialog;
  private model!: ShellModel;
  private context: ToolContext | null = null;
  private liveTimer: ReturnType<typeof setInterval> | undefined;
  /** The baseline run of a comparison ("Compare with"), '' when none; kept in the URL. */
  private baseRun = readBaseRun(window.location.search);
  private readonly onPopState = () => {
    this.baseRun = readBaseRun(window.location.search);
    void this.model.followUrl();
  };
  private readonly onNavigate = (event: Event) => {
    const { tool, host } = (event as CustomEvent<NavigateDetail>).detail ?? {};
    if (host && tool === this.model.selection.tool) void this.model.selectHost(host);
    else if (tool && this.model.tools?.includes(tool)) void this.model.selectTool(tool);
  };

  static override styles = [
    controlStyles,
    css`
      :host {
        display: block;
        min-height: 100vh;
      }
      header {
        display: flex;
        flex-wrap: wrap;
        align-items: flex-end;
        gap: 12px;
        padding: 10px 16px;
        background: var(--pf-surface);
        border-bottom: 1px solid var(--pf-border);
        position: sticky;
        top: 0;
        z-index: 2;
      }
      h1 {
        font-size: 1.1rem;
        margin: 0 12px 4px 0;
        align-self: center;
      }
      .spacer {
        flex: 1;
      }
      .live {
        align-self: center;
        font-size: 0.85rem;
        color: var(--pf-muted);
      }
      main {
        padding: 8px 16px 32px;
      }
    `,
  ];

  override connectedCallback(): void {
    super.connectedCallback();
    this.model = new ShellModel(this.api, window);
    this.model.onChange = () => this.requestUpdate();
    window.addEventListener('popstate', this.onPopState);
    this.addEventListener(NAVIGATE_EVENT, this.onNavigate);
    void this.model.start();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    window.removeEventListener('popstate', this.onPopState);
    clearInterval(this.liveTimer);
  }

  /** A live page lists sessions as they are saved, whoever captured them. */
  override updated(): void {
    if (this.model.config.live && this.liveTimer === undefined) {
      this.liveTimer = setInterval(() => void this.model.refreshRuns(), LIVE_REFRESH_MS);
    }
  }

  override render() {
    const m = this.model;
    const { run, tool, host } = m.selection;
    const showCapture = !m.config.hideCaptureProfileButton;
    return html`
      <header>
        <h1>Profile</h1>
        <pf-select-field
          label="Run"
          .value=${run}
          .options=${(m.runs ?? []).map((r) => ({ value: r, label: r }))}
          ?loading=${m.loading === 'runs'}
          @pf-select=${(e: CustomEvent<{ value: string }>) => void m.selectRun(e.detail.value)}
        ></pf-select-field>
        <pf-select-field
          label="Compare with"
          title="A baseline run: the tool then shows what changed from it to this run"
          .value=${this.baseRun}
          .options=${baseRunOptions(m.runs ?? [], run)}
          ?loading=${m.loading === 'runs'}
          @pf-select=${(e: CustomEvent<{ value: string }>) => this.selectBaseRun(e.detail.value)}
        ></pf-select-field>
        <pf-select-field
          label="Tool"
          .value=${tool}
          .options=${(m.tools ?? []).map((t) => ({ value: t, label: toolLabel(t) }))}
          ?loading=${m.loading === 'tools' || m.loading === 'runs'}
          @pf-select=${(e: CustomEvent<{ value: string }>) => void m.selectTool(e.detail.value)}
        ></pf-select-field>
        <pf-select-field
          label="Host"
          .value=${host}
          placeholder="(all hosts)"
          .options=${(m.hosts ?? []).map((h) => ({ value: h, label: h === 'ALL_HOSTS' ? 'All hosts' : h }))}
          ?loading=${m.loading !== null}
          @pf-select=${(e: CustomEvent<{ value: string }>) => void m.selectHost(e.detail.value)}
        ></pf-select-field>
        <span class="spacer"></span>
        ${m.config.live
          ? html`<span class="live" title="This page is served by the training process itself"
              >Live: ${m.config.live.framework} process ${m.config.live.pid}</span
            >`
          : nothing}
        ${run ? html`<pf-copy-link></pf-copy-link>` : nothing}
        ${run
          ? html`<a class="button download" href=${this.api.url('session_export', { run })} download
              title="All profile files of this run as one .zip">Download session</a>`
          : nothing}
        ${showCapture
          ? html`<button type="button" class="primary" @click=${() => this.captureDialog.open()}>
              Capture Profile
            </button>`
          : nothing}
      </header>
      <main>
        ${(m.config.warnings ?? []).map(
          (warning) => html`<pf-message kind="error" heading="Installation problem" .message=${warning}></pf-message>`,
        )}
        ${m.notice ? html`<pf-message class="notice" kind="info" heading="Not found" .message=${m.notice}></pf-message>` : nothing}
        ${m.config.live
          ? html`<pf-live-steps
              .api=${this.api}
              @pf-select-run=${(e: CustomEvent<{ run: string }>) => void m.reloadRunsAndSelectNewest(e.detail.run)}
              @pf-step-captured=${() => void m.refreshRuns()}
            ></pf-live-steps>`
          : nothing}
        ${this.renderMain()}
      </main>
      ${showCapture
        ? html`<pf-capture-dialog
            .api=${this.api}
            .live=${m.config.live}
            @pf-captured=${(e: CustomEvent<{ session?: string }>) => void m.reloadRunsAndSelectNewest(e.detail?.session)}
          ></pf-capture-dialog>`
        : nothing}
    `;
  }

  private renderMain() {
    const m = this.model;
    switch (m.phase) {
      case 'loading':
        return html`<pf-skeleton label="Loading ${m.loading ?? ''}"></pf-skeleton>`;
      case 'error':
        return html`<pf-message
          kind="error"
          heading="Could not load the ${m.loading ?? 'profile'} list"
          .code=${m.error ? `${m.error.status || ''} ${m.error.code}`.trim() : ''}
          .message=${m.error?.message ?? ''}
        ></pf-message>`;
      case 'no-runs':
        return html`<pf-diagnosis
          .api=${this.api}
          ?can-capture=${!m.config.hideCaptureProfileButton}
          @pf-open-capture=${() => this.captureDialog?.open()}
        ></pf-diagnosis>`;
      case 'no-tools':
        return html`<pf-message
          kind="info"
          heading="No tools for this run"
          message="This run holds no profile data the tools can read (no .xplane.pb files)."
        ></pf-message>`;
      case 'ready':
        if (this.baseRun) {
          return html`<pf-compare-view .context=${this.toolContext()} .baseRun=${this.baseRun}></pf-compare-view>`;
        }
        return html`<pf-tool-view .context=${this.toolContext()}></pf-tool-view>`;
    }
  }

  private selectBaseRun(baseRun: string): void {
    this.baseRun = baseRun;
    const { pathname, search, hash } = window.location;
    window.history.pushState(window.history.state, '', pathname + withBaseRun(search, baseRun) + hash);
    this.requestUpdate();
  }

  /** The same object while the selection is unchanged, so the tool view does not reload. */
  private toolContext(): ToolContext {
    const { run, tool, host } = this.model.selection;
    const c = this.context;
    if (!c || c.run !== run || c.tool !== tool || c.host !== host) {
      this.context = { api: this.api, run, tool, host, tools: this.model.tools ?? [] };
    }
    return this.context!;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'pf-app': AppShell;
  }
}
