// Browser test of long names at 1366x768 (issue 28 item 9, "names cut short despite free
// width"): in the tables of TF stats, HLO stats, kernel stats and the model view, a name is shown
// whole on one line and cut (with an ellipsis by the browser) only when the table has no free
// width left for it; the full name is the cell's tooltip. Screenshots of each page.
//
//   PROFILE_E2E_URL=http://127.0.0.1:8791/ node e2e/names.e2e.mjs
import { join } from 'node:path';
import { e2eTarget, enforceStrictCsp, guardOrigin, launchChromium } from './browser.mjs';

const { base, artifacts } = e2eTarget();
const TIMEOUT_MS = Number(process.env.PROFILE_E2E_TIMEOUT_MS || 60000);
const PAGES = [
  { run: 'tf_keras_fit/session_1', tool: 'framework_op_stats', host: '' }, // TF scope names
  { run: 'jax_cpu_train/session_1', tool: 'hlo_stats', host: '' }, // JAX HLO names
  { run: 'gpu_multi_worker/GPU-multi-worker', tool: 'kernel_stats', host: '' }, // CUDA kernel names
  { run: 'jax_cpu_train/session_1', tool: 'model_view', host: '' },
];
const problems = [];
let step = 'start';

function check(condition, message) {
  if (!condition) throw new Error(message);
}

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

async function main() {
  const browser = await launchChromium();
  try {
    const context = await browser.newContext({ viewport: { width: 1366, height: 768 } });
    await enforceStrictCsp(context, base.origin);
    const page = await context.newPage();
    guardOrigin(page, base.origin, problems);
    page.on('console', (m) => m.type() === 'error' && problems.push(`console error: ${m.text()}`));
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    let longest = 0;
    for (const p of PAGES) {
      step = `${p.tool} on ${p.run}`;
      const params = { run: p.run, tool: p.tool, ...(p.host ? { host: p.host } : {}) };
      await page.goto(new URL('?' + new URLSearchParams(params), base).href);
      const table = page.locator('pf-data-table').first();
      await table.locator('tbody tr').first().waitFor({ timeout: TIMEOUT_MS });
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
      await page.screenshot({ path: join(artifacts, `names-${p.tool}.png`) });
    }
    check(longest > 48, `no name longer than the old 48-character cut is shown whole (longest ${longest})`);
  } finally {
    await browser.close();
  }
}

main().then(
  () => {
    if (problems.length) {
      console.error(`e2e FAILED: ${problems.join('\n')}`);
      process.exit(1);
    }
    console.log(`1 passed (long names on ${PAGES.length} pages)`);
  },
  (error) => {
    console.error(`e2e FAILED at "${step}": ${error.message}`);
    process.exit(1);
  },
);
