// Browser test of units in tables (issue 28 item 8) on real fixtures: a column whose values are
// times or sizes shows each value in a readable unit ("104 ms", not "104285.44" under "(us)"),
// the raw value in the cell's tooltip; sorting follows the raw values; the header drops the
// unit. HLO stats (upstream's payload: the unit from the label's "(us)") and PyTorch kernels
// (ours: the unit declared in the column's p.unit).
//
//   PROFILE_E2E_URL=http://127.0.0.1:8791/ node e2e/units.e2e.mjs
import { check } from './browser.mjs';
import { e2eSuite } from './harness.mjs';

const suite = e2eSuite('units');
const CASES = [
  { run: 'jax_two_hosts/multi_jax2__xprof_client', tool: 'hlo_stats', host: '127.0.0.1_19111', label: 'Total self time (us)', declared: false },
  { run: 'pytorch_two_ranks/run/1', tool: 'pytorch_kernels', host: 'rank1', label: 'Total duration (us)', declared: true },
];
const TO_US = { ns: 1e-3, 'µs': 1, ms: 1e3, s: 1e6 };
let page;

/** [text, tooltip] of every cell of the column whose header's tooltip is `label`. */
async function cells(table, label) {
  return table.evaluate((el, want) => {
    const root = el.shadowRoot;
    const heads = [...root.querySelectorAll('thead th')];
    const index = heads.findIndex((th) => th.querySelector('button')?.title === want);
    if (index < 0) return null;
    return {
      header: heads[index].querySelector('button').textContent.replace(/[▲▼]/g, '').trim(),
      cells: [...root.querySelectorAll('tbody tr')].map((tr) => {
        const td = tr.querySelectorAll('td')[index];
        return [td.textContent.trim(), td.title];
      }),
    };
  }, label);
}

const where = (c) => ({ run: c.run, tool: c.tool, ...(c.host ? { host: c.host } : {}) });

async function readableUnits(c) {
  const data = await suite.api('data', { run: c.run, tag: c.tool, ...(c.host ? { host: c.host } : {}) });
  const first = Array.isArray(data) ? data.find((t) => t?.cols) : data;
  const col = first.cols.find((x) => x.label === c.label);
  check(col, `the payload has no column "${c.label}"`);
  check(Boolean(col.p?.unit) === c.declared, `p.unit of "${c.label}": ${JSON.stringify(col.p)}`);
  await page.goto(suite.appUrl(where(c)));
  const table = page.locator('pf-data-table').first();
  await table.locator('tbody tr').first().waitFor({ timeout: suite.timeoutMs });
  const shown = await cells(table, c.label);
  check(shown, `no header with the tooltip "${c.label}"`);
  check(!shown.header.includes('(us)'), `the header still says "${shown.header}"`);
  for (const [text, title] of shown.cells) {
    const m = /^(-?[\d.]+) (ns|µs|ms|s)$/.exec(text);
    const raw = /^(-?[\d.]+) us$/.exec(title);
    check(m && raw, `a cell shows "${text}" (tooltip "${title}"), not a value with its unit`);
    const us = Number(m[1]) * TO_US[m[2]];
    const want = Number(raw[1]);
    check(Math.abs(us - want) <= Math.max(0.006 * Math.abs(want), 0.006 * TO_US[m[2]]), `"${text}" is not ${want} us`);
    check(Number(m[1]) < 1000 || m[2] === 's', `"${text}" should be in a larger unit`);
  }
  return `${shown.cells.length} cells, e.g. "${shown.cells[0]?.[0]}"`;
}

async function sortsByRawValue(c) {
  const table = page.locator('pf-data-table').first();
  const header = table.locator(`thead th button[title="${c.label}"]`);
  await header.click();
  await header.click();
  const sorted = (await cells(table, c.label)).cells.map(([, title]) => Number(title.split(' ')[0]));
  check(sorted.every((v, i) => i === 0 || sorted[i - 1] >= v), `not descending by the raw value: ${sorted.slice(0, 8)}`);
  await suite.shot(c.tool);
  return 'descending by the raw value';
}

suite.run(
  (opened) => {
    page = opened;
    return CASES.flatMap((c) => [
      [`${c.tool}: "${c.label}" in readable units`, readableUnits, c],
      [`${c.tool}: sorting follows the raw values`, sortsByRawValue, c],
    ]);
  },
  { viewport: { width: 1366, height: 768 } },
);
