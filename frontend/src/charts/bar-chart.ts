/**
 * A horizontal bar chart (label → value) drawn by ECharts on a canvas, loaded lazily.
 *
 *   <pf-bar-chart .bars=${[{label: 'MatMul', value: 12.5}]} unit="ms" label="Top ops"></pf-bar-chart>
 */
import { LitElement, css, html } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import { formatCompact, formatNumber } from '../format';

export interface Bar {
  label: string;
  value: number;
}

type Chart = import('./echarts-setup').EChartsType;

@customElement('pf-bar-chart')
export class BarChartElement extends LitElement {
  @property({ attribute: false }) bars: Bar[] = [];
  @property() unit = '';
  @property() label = '';

  private chart: Chart | null = null;
  private resizeObserver: ResizeObserver | null = null;

  static override styles = css`
    :host {
      display: block;
    }
    .chart {
      width: 100%;
      height: 320px;
    }
  `;

  override render() {
    return html`<div class="chart" role="img" aria-label=${this.label}></div>`;
  }

  override async updated(): Promise<void> {
    const container = this.renderRoot.querySelector<HTMLElement>('.chart');
    if (!container) return;
    if (!this.chart) {
      const { init } = await import('./echarts-setup');
      if (!this.isConnected || this.chart) return;
      this.chart = init(container, undefined, { renderer: 'canvas' });
      this.resizeObserver = new ResizeObserver(() => this.chart?.resize());
      this.resizeObserver.observe(container);
    }
    this.chart.setOption(this.option(), true);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.resizeObserver?.disconnect();
    this.chart?.dispose();
    this.chart = null;
  }

  private option() {
    const style = getComputedStyle(this);
    const text = style.getPropertyValue('--pf-text').trim() || '#333';
    const accent = style.getPropertyValue('--pf-accent').trim() || '#c2410c';
    const bars = [...this.bars].reverse();
    return {
      animation: false,
      grid: { left: 8, right: 24, top: 8, bottom: 8, containLabel: true },
      tooltip: {
        renderMode: 'richText',
        trigger: 'item',
        formatter: (p: { name: string; value: number }) => `${p.name}\n${formatNumber(p.value)} ${this.unit}`,
      },
      xAxis: { type: 'value', axisLabel: { color: text, formatter: formatCompact } },
      yAxis: {
        type: 'category',
        data: bars.map((bar) => bar.label),
        axisLabel: { color: text, width: 220, overflow: 'truncate' },
      },
      series: [{ type: 'bar', data: bars.map((bar) => bar.value), itemStyle: { color: accent } }],
    };
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'pf-bar-chart': BarChartElement;
  }
}
