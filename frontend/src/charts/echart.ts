/**
 * One ECharts chart on a canvas, loaded lazily. The page gives a function from the theme to the
 * chart option, so the chart is redrawn in the right colours when light/dark mode changes.
 *
 *   <pf-echart label="Step time" .option=${(theme) => stepTimeOption(model, theme)}></pf-echart>
 *
 * Hovering an item fires `pf-chart-hover` with `{seriesIndex, dataIndex, name}` (and `pf-chart-leave`).
 */
import { LitElement, css, html } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import type { ChartOption } from './options';
import { readTheme, type ChartTheme } from './theme';

type Chart = import('./echarts-setup').EChartsType;

export interface ChartHover {
  seriesIndex: number;
  dataIndex: number;
  name: string;
}

@customElement('pf-echart')
export class EChartElement extends LitElement {
  @property({ attribute: false }) option: ((theme: ChartTheme) => ChartOption) | null = null;
  @property() label = '';
  @property({ type: Number }) height = 320;

  private chart: Chart | null = null;
  private resizeObserver: ResizeObserver | null = null;
  private colorScheme: MediaQueryList | null = null;
  private readonly onScheme = () => this.draw();

  static override styles = css`
    :host {
      display: block;
    }
    .chart {
      width: 100%;
    }
  `;

  override render() {
    return html`<div class="chart" role="img" aria-label=${this.label}></div>`;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    this.colorScheme = window.matchMedia?.('(prefers-color-scheme: dark)') ?? null;
    this.colorScheme?.addEventListener?.('change', this.onScheme);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.colorScheme?.removeEventListener?.('change', this.onScheme);
    this.resizeObserver?.disconnect();
    this.chart?.dispose();
    this.chart = null;
  }

  override async updated(): Promise<void> {
    const container = this.renderRoot.querySelector<HTMLElement>('.chart');
    if (!container) return;
    // A CSSOM property (not a style attribute), so the strict CSP allows it.
    container.style.height = `${this.height}px`;
    if (!this.chart) {
      const { init } = await import('./echarts-setup');
      if (!this.isConnected || this.chart) return;
      this.chart = init(container, undefined, { renderer: 'canvas' });
      this.chart.on('mouseover', (event: unknown) => this.hover(event as ChartHover));
      this.chart.on('globalout', () => this.dispatchEvent(new CustomEvent('pf-chart-leave')));
      this.resizeObserver = new ResizeObserver(() => this.chart?.resize());
      this.resizeObserver.observe(container);
    }
    this.draw();
  }

  /** The live chart instance (tests read it). */
  get instance(): Chart | null {
    return this.chart;
  }

  private draw(): void {
    if (!this.chart || !this.option) return;
    this.chart.setOption(this.option(readTheme(this)) as never, true);
  }

  private hover(event: ChartHover): void {
    const detail: ChartHover = { seriesIndex: event.seriesIndex, dataIndex: event.dataIndex, name: event.name };
    this.dispatchEvent(new CustomEvent<ChartHover>('pf-chart-hover', { detail }));
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'pf-echart': EChartElement;
  }
}
