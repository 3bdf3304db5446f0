/**
 * The only module that imports ECharts. It is loaded with a dynamic import, so ECharts lands in
 * its own chunk and only pages that draw a chart pay for it; `use()` registers just the parts we
 * draw with (tree-shaken build). Tooltips use rich text (canvas), never HTML, so profile strings
 * cannot become markup and no inline styles are needed.
 */
import { BarChart, LineChart, PieChart, ScatterChart } from 'echarts/charts';
import { GridComponent, LegendComponent, MarkLineComponent, TooltipComponent } from 'echarts/components';
import { init, use, type EChartsType } from 'echarts/core';
import { CanvasRenderer } from 'echarts/renderers';

use([
  BarChart,
  LineChart,
  PieChart,
  ScatterChart,
  GridComponent,
  LegendComponent,
  MarkLineComponent,
  TooltipComponent,
  CanvasRenderer,
]);

export { init };
export type { EChartsType };
