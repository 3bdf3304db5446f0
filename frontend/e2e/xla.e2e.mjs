// Browser test of the XLA tool pages in real headless Chromium (playwright-core + /usr/bin/chromium).
//
//   PROFILE_E2E_URL=http://127.0.0.1:8791/ PROFILE_E2E_ARTIFACTS=/tmp/shots node e2e/xla.e2e.mjs
//
// On every JAX fixture run: the memory viewer (peak and buffer count equal the server's, heap
// chart drawn, a buffer's op opens the graph viewer), the graph viewer (the drawn ops are the
// server's neighbourhood, a fusion expands, the HLO text tab shows the module's text), op profile
// (rows are the tree's children, drill-down, group by category, an op opens the graph viewer),
// HLO stats (row count, CSV equals data_csv) and the roofline on a CPU (peaks measured on this
// machine, and labelled so; the user's peaks through the form; half a roof refused). Fails on requests to other origins, console errors, page errors
// or CSP violations. Screenshots land in PROFILE_E2E_ARTIFACTS (xla-*.png).
import { readFileSync } from 'node:fs';
import { check, parseCsv } from './browser.mjs';
import { e2eSuite } from './harness.mjs';

const suite = e2eSuite('xla');
const { api, appUrl, shot } = suite;
const TIMEOUT_MS = suite.timeoutMs;
let page;

async function view(tag) {
  const element = page.locator(`pf-tool-view > ${tag}`);
  await element.waitFor({ timeout: TIMEOUT_MS });
  return element;
}

const param = (name) => new URL(page.url()).searchParams.get(name) ?? '';

async function memoryViewer(run) {
  await page.goto(appUrl({ run, tool: 'memory_viewer' }));
  const el = await view('pf-memory-viewer-view');
  await el.locator('section[aria-label="Memory summary"]').waitFor({ timeout: TIMEOUT_MS });
  const module = param('module_name');
  check(module, 'the memory viewer did not put its module in the URL');
  const data = await api('data', { run, tag: 'memory_viewer', module_name: module });
  const summary = (await el.locator('section[aria-label="Memory summary"]').textContent()).replace(/\s+/g, ' ');
  check(summary.includes(`${data.peakHeapMib.toFixed(2)} MiB`), `summary "${summary}" lacks the peak ${data.peakHeapMib}`);
  await el.locator('pf-echart.heap canvas').first().waitFor({ timeout: TIMEOUT_MS });
  const rows = await el.locator('pf-data-table tbody tr').count();
  check(rows === Math.min(data.maxHeapBySize.length, 50), `peak table shows ${rows} rows, server has ${data.maxHeapBySize.length}`);
  await shot(`memory-viewer-${run}`);
  const link = el.locator('pf-data-table tbody a').first();
  if (!(await link.count())) return `${module}: peak ${data.peakHeapMib.toFixed(3)} MiB (no op links)`;
  const op = (await link.textContent()).replace(/\{[\d,]*\}$/, '');
  await link.click();
  await graphDrawn(op);
  check(param('tool') === 'graph_viewer' && param('node_name') === op, `the op link did not open ${op} in the graph viewer`);
  return `${module}: peak ${data.peakHeapMib.toFixed(3)} MiB, ${rows} buffers; ${op} opens the graph viewer`;
}

async function graphDrawn(op) {
  const el = await view('pf-graph-viewer-view');
  await el.locator(`svg g.node.center[data-op="${op}"]`).waitFor({ timeout: TIMEOUT_MS });
  return el;
}

async function graphViewer(run) {
  // The largest program makes the most telling picture.
  let module = '';
  let ops = [];
  for (const name of (await api('module_list', { run }, 'text')).split(',')) {
    const reply = await api('data', { run, tag: 'graph_viewer', module_name: name, type: 'ops' });
    if (reply.ops.length > ops.length) [module, ops] = [name, reply.ops];
  }
  const fusion = ops.find((o) => o.opcode === 'fusion') ?? ops[ops.length - 1];
  await page.goto(appUrl({ run, tool: 'graph_viewer', module_name: module, node_name: fusion.name }));
  const el = await graphDrawn(fusion.name);
  const graph = await api('data', { run, tag: 'graph_viewer', module_name: module, type: 'graph', node_name: fusion.name, graph_width: 2 });
  const drawn = await el.locator('svg g.node').count();
  check(drawn === graph.nodes.length, `drew ${drawn} ops, the server's neighbourhood has ${graph.nodes.length}`);
  let expanded = '';
  if (fusion.opcode === 'fusion') {
    await el.locator(`svg g.node.center rect.toggle`).click();
    const inner = await el.locator('svg g.node.center g rect').count();
    check(inner > 0, 'expanding the fusion drew none of its ops');
    expanded = `, fusion expands to ${inner} ops`;
  }
  await shot(`graph-viewer-${run}`);
  await el.locator('button[role="tab"]', { hasText: 'HLO text' }).click();
  const pre = el.locator('pre.hlo');
  await page.waitForFunction((node) => node.textContent.startsWith('HloModule'), await pre.elementHandle(), { timeout: TIMEOUT_MS });
  const expected = await api('data', { run, tag: 'graph_viewer', module_name: module, type: 'short_txt' }, 'text');
  check((await pre.textContent()) === expected, 'the HLO text tab differs from the server text');
  await shot(`graph-viewer-text-${run}`);
  return `${module} around ${fusion.name}: ${drawn} ops${expanded}; text tab = short_txt`;
}

async function opProfile(run) {
  await page.goto(appUrl({ run, tool: 'op_profile' }));
  const el = await view('pf-op-profile-view');
  const table = el.locator('table[aria-label="Op profile items"]');
  await table.waitFor({ timeout: TIMEOUT_MS });
  const data = await api('data', { run, tag: 'op_profile' });
  const programs = data.byProgramExcludeIdle.children;
  check((await table.locator('tbody tr').count()) === programs.length, 'program rows differ from the tree');
  await table.locator('button.drill').first().click();
  await table.locator('button.drill').first().click();
  const opLinks = table.locator('a.op-link');
  await opLinks.first().waitFor({ timeout: TIMEOUT_MS });
  const rates = await table.locator('tbody tr td:nth-child(6)').allTextContents();
  check(rates.some((text) => Number(text.replace(/,/g, '')) > 0), 'no op shows a GFLOP/s (FLOPs from the HLO)');
  await shot(`op-profile-${run}`);
  await el.locator('select[name="group_by"]').selectOption('category');
  await page.waitForFunction(
    (node) => node.shadowRoot.querySelector('nav.crumbs button')?.textContent === 'by_category',
    await el.elementHandle(),
    { timeout: TIMEOUT_MS },
  );
  await shot(`op-profile-by-category-${run}`);
  await table.locator('button.drill').first().click();
  const link = table.locator('a.op-link').first();
  const op = await link.textContent();
  await link.click();
  await graphDrawn(op);
  return `${programs.length} programs; drill-down, by category, ${op} opens the graph viewer`;
}

async function hloStats(run) {
  await page.goto(appUrl({ run, tool: 'hlo_stats' }));
  const el = await view('pf-hlo-stats-view');
  const table = el.locator('pf-data-table');
  await table.locator('tbody tr').first().waitFor({ timeout: TIMEOUT_MS });
  await el.locator('pf-echart.pie canvas').first().waitFor({ timeout: TIMEOUT_MS });
  const host = param('host');
  const data = await api('data', { run, tag: 'hlo_stats', host });
  const count = (await table.locator('.count').textContent()).replace(/\s+/g, ' ');
  check(count.includes(String(data.rows.length)), `row count "${count}" is not ${data.rows.length}`);
  const href = new URL(await table.locator('a.export').getAttribute('href'), page.url());
  const [download] = await Promise.all([page.waitForEvent('download', { timeout: TIMEOUT_MS }), table.locator('a.export').click()]);
  const file = readFileSync(await download.path(), 'utf8');
  check(href.pathname.endsWith('/data_csv'), 'CSV link is not data_csv');
  check(file === (await api('data_csv', { run, tag: 'hlo_stats', host }, 'text')), 'downloaded CSV differs from data_csv');
  check(parseCsv(file).length - 1 === data.rows.length, 'CSV row count differs');
  await percentShown(table, data);
  await exportAsShown(table, data);
  await shot(`hlo-stats-${run}`);
  const link = table.locator('tbody a').first();
  const op = await link.textContent();
  await link.click();
  await graphDrawn(op);
  return `${data.rows.length} ops, CSV = data_csv, ${op} opens the graph viewer`;
}

// Issue 28, item 1: "Self time (%)" was shown as the converter's fraction (0.166) where op
// profile and the CSV say 16.58: the page shows the percentage.
async function percentShown(table, data) {
  const headers = (await table.locator('thead th').allTextContents()).map((t) => t.replace(/[▲▼]/g, '').trim());
  const shown = headers.indexOf('Self time (%)');
  const column = data.cols.findIndex((c) => c.id === 'total_self_time_percent');
  check(shown >= 0 && column >= 0, `no "Self time (%)" column among ${headers}`);
  const text = await table.locator('tbody tr').first().locator('td').nth(shown).textContent();
  const fraction = data.rows[0].c[column].v;
  check(Math.abs(Number(text) - fraction * 100) < 0.002, `"Self time (%)" shows ${text} for the fraction ${fraction}`);
}

// Issue 28, item 12: "Export as shown" writes the rows the filter keeps, in the order on screen.
async function exportAsShown(table, data) {
  const column = data.cols.findIndex((c) => c.id === 'category');
  const category = data.rows[data.rows.length - 1].c[column].v;
  const wanted = data.rows.filter((r) => String(r.c[column].v) === category).length;
  await table.locator('input[type="search"]').fill(category);
  await table.locator('thead th button[title="Total self time (us)"]').click(); // ascending (the header reads "Self time")
  const count = (await table.locator('.count').textContent()).trim();
  const [download] = await Promise.all([
    page.waitForEvent('download', { timeout: TIMEOUT_MS }),
    table.locator('button.export-shown').click(),
  ]);
  const csv = parseCsv(readFileSync(await download.path(), 'utf8'));
  const shownRows = Number(/^(\d+)/.exec(count)?.[1]);
  check(csv.length - 1 === shownRows && shownRows >= wanted, `"as shown" CSV has ${csv.length - 1} rows, the page shows "${count}"`);
  const self = csv[0].findIndex((label) => label.startsWith('Total self time'));
  const times = csv.slice(1).map((r) => Number(r[self]));
  check(self >= 0 && times.every((t, i) => i === 0 || times[i - 1] <= t), `"as shown" CSV not in the order shown: ${times}`);
  await table.locator('input[type="search"]').fill('');
}

async function rooflineOnCpu(run) {
  const [ops] = await api('data', { run, tag: 'roofline_model' });
  check(ops.p.peak_source === 'measured on this machine', `roofline peaks are "${ops.p.peak_source}" on a CPU run`);
  await page.goto(appUrl({ run, tool: 'roofline_model' }));
  const el = await view('pf-roofline-view');
  const summary = el.locator('section[aria-label="Device peaks"]');
  await summary.waitFor({ timeout: TIMEOUT_MS });
  const text = (await summary.textContent()).replace(/\s+/g, ' ');
  check(text.includes('measured on this machine'), `the roofline summary "${text}" does not say where the peaks come from`);
  await el.locator('pf-echart.roofline canvas').first().waitFor({ timeout: TIMEOUT_MS });
  await shot(`roofline-cpu-${run}`);
  // The user's roof: the summary and the table follow it, and says so.
  const form = el.locator('pf-roofline-peaks');
  await form.locator('input[name="peak_gflops"]').fill('100');
  await form.locator('input[name="peak_gib_s"]').fill('10');
  await form.locator('button[type="submit"]').click();
  await page.waitForFunction(
    (node) => node.shadowRoot.querySelector('section[aria-label="Device peaks"]')?.textContent.includes('given by the user'),
    await el.elementHandle(),
    { timeout: TIMEOUT_MS },
  );
  const given = (await summary.textContent()).replace(/\s+/g, ' ');
  check(given.includes('100 GFLOP/s') && given.includes('10 FLOP/byte'), `the summary "${given}" does not show the given roof`);
  await shot(`roofline-given-peaks-${run}`);
  // Half a roof is refused before any request, naming both parameters.
  await form.locator('input[name="peak_gib_s"]').fill('');
  await form.locator('button[type="submit"]').click();
  const alert = form.locator('p.error[role="alert"]');
  await alert.waitFor({ timeout: TIMEOUT_MS });
  check((await alert.textContent()).includes('peak_gib_s'), 'the refusal does not name the missing peak');
  return `roof ${Math.round(Number(ops.p.peak_flop_rate))} GFLOP/s, ${Math.round(Number(ops.p.peak_hbm_bw))} GiB/s, measured on this machine; given peaks applied; half a roof refused`;
}

suite.run(async (opened) => {
  page = opened;
  const runs = (await api('runs')).filter((r) => r.startsWith('jax_'));
  check(runs.length >= 3, `expected the three JAX fixture runs, found ${runs}`);
  const checks = [
    ['memory viewer', memoryViewer],
    ['graph viewer', graphViewer],
    ['op profile', opProfile],
    ['HLO stats', hloStats],
    ['roofline on a CPU', rooflineOnCpu],
  ];
  return runs.flatMap((run) => checks.map(([name, fn]) => [`${name} ${run}`, fn, run]));
});
