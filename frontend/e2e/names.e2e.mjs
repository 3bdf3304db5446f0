// Browser test of long names at 1366x768 (issue 28 item 9, "names cut short despite free
// width"): in the tables of TF stats, HLO stats, kernel stats and the model view, a name is shown
// whole on one line and cut (with an ellipsis by the browser) only when the table has no free
// width left for it; the full name is the cell's tooltip. Screenshots of each page.
//
//   PROFILE_E2E_URL=http://127.0.0.1:8791/ node e2e/names.e2e.mjs
import { check } from './browser.mjs';
import { e2eSuite } from './harness.mjs';

const suite = e2eSuite('names');
const PAGES = [
  { run: 'tf_keras_fit/session_1', tool: 'framework_op_stats' }, // TF scope names
  { run: 'jax_cpu_train/session_1', tool: 'hlo_stats' }, // JAX HLO names
  { run: 'gpu_multi_worker/GPU-multi-worker', tool: 'kernel_stats' }, // CUDA kernel names
  { run: 'jax_cpu_train/session_1', tool: 'model_view' },
];
let page;
let longest = 0;

/** Per name cell: the text, the tooltip, whether it is cut; and the table's free width. */
async function nameCells(table) {
  return table.evaluate((el) => {
    const root = el.shadowRoot;
    const scroll = root.querySelector('.scroll');
    const tableEl = root.querySelector('table');
    const cells = [...root.querySelectorAll('td.name')].map((td) => ({
      text: td.textContent.trim(),
      title: td.title,
      cut: td.scrollWidth > td.clientWidth + 1,
      width: td.clientWidth,
    }));
    return { cells, free: scroll.clientWidth - tableEl.getBoundingClientRect().width };
  });
}

async function wholeNames(p) {
  await page.goto(suite.appUrl({ run: p.run, tool: p.tool }));
  const table = page.locator('pf-data-table').first();
  await table.locator('tbody tr').first().waitFor({ timeout: suite.timeoutMs });
  const { cells, free } = await nameCells(table);
  check(cells.length > 0, 'the table has no name cells');
  for (const cell of cells) {
    check(cell.title === cell.text, `the name "${cell.text}" has the tooltip "${cell.title}" (not the whole name)`);
    check(!cell.text.includes('…'), `the name "${cell.text}" was shortened in the text`);
    check(!cell.cut || free <= 1, `"${cell.text}" is cut at ${cell.width} px while the table leaves ${free} px free`);
    check(!cell.cut || cell.width >= 150, `"${cell.text}" is cut to ${cell.width} px`);
  }
  longest = Math.max(longest, ...cells.filter((c) => !c.cut).map((c) => c.text.length));
  const overflow = await table.evaluate((el) => {
    const s = el.shadowRoot.querySelector('.scroll');
    return s.scrollWidth - s.clientWidth;
  });
  check(overflow <= 1, `the table scrolls sideways by ${overflow} px at 1366 px`);
  await suite.shot(p.tool);
  return `${cells.length} names, ${cells.filter((c) => c.cut).length} cut where the table is full`;
}

async function longNamesShownWhole() {
  check(longest > 48, `no name longer than the old 48-character cut is shown whole (longest ${longest})`);
  return `longest name shown whole: ${longest} characters`;
}

suite.run(
  (opened) => {
    page = opened;
    return [...PAGES.map((p) => [`${p.tool} on ${p.run}`, wholeNames, p]), ['a long name is shown whole', longNamesShownWhole]];
  },
  { viewport: { width: 1366, height: 768 } },
);
