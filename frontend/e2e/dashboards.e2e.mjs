// Browser test of the tool dashboards in real headless Chromium (playwright-core + /usr/bin/chromium).
//
//   PROFILE_E2E_URL=http://127.0.0.1:8791/ PROFILE_E2E_ARTIFACTS=/tmp/shots node e2e/dashboards.e2e.mjs
//
// Runs against the real server on the fixtures in tests/data. Every dashboard is opened through a deep
// link and its key numbers are compared with the same data fetched from the server (average step
// time, top operation, kernel count, memory peak, pipeline graph, ...); tables' Export as CSV
// downloads are compared with `data_csv` (or with the table shown, for tables the page derives).
// A tool is checked only when `run_tools` lists it on some run. Also: a profile string with markup
// stays text in a dashboard table and chart; NOT_APPLICABLE shows the server's reason; an empty
// run list shows the server's diagnosis; the capture dialog follows an async job; first paint of
// the overview with a warm cache is timed (navigationStart → overview rendered, must be < 1 s).
// Fails on any request to another origin, console error (a NOT_APPLICABLE 404 excepted), page
// error or CSP violation. Screenshots of every page land in PROFILE_E2E_ARTIFACTS.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { abort, e2eTarget, launchChromium, openPage, parseCsv, report } from './browser.mjs';

const TIMEOUT_MS = Number(process.env.PROFILE_E2E_TIMEOUT_MS || 60000);
const FIRST_PAINT_BUDGET_MS = Number(process.env.PROFILE_E2E_FIRST_PAINT_MS || 1000);
const XSS = '<img src=x onerror=alert(1)>';

const { base, pluginBase, artifacts: ARTIFACTS } = e2eTarget();

const problems = [];
const results = [];
let requests = 0;
let page;
let step = 'start';

function check(condition, message) {
  if (!condition) throw new Error(message);
}

const q = (params) => new URLSearchParams(Object.entries(params).filter(([, v]) => v !== undefined && v !== '')).toString();

async function api(route, params = {}, as = 'json') {
  const response = await fetch(new URL(`${route}?${q(params)}`, pluginBase));
  if (as === 'response') return response;
  check(response.ok, `GET ${route} ${q(params)} answered ${response.status}`);
  return as === 'text' ? response.text() : response.json();
}

const hostsOf = async (run, tool) => (await api('hosts', { run, tag: tool })).map((h) => h.hostname ?? h);

/** Runs listing the tool, with the first host the page would pick. */
async function targetsFor(tool, preferred = []) {
  const runs = await api('runs');
  const ordered = [...preferred.filter((r) => runs.includes(r)), ...runs.filter((r) => !preferred.includes(r))];
  const found = [];
  for (const run of ordered) {
    if ((await api('run_tools', { run })).includes(tool)) found.push({ run, tool, host: (await hostsOf(run, tool))[0] ?? '' });
  }
  return found;
}

function appUrl(run, tool, host, extra = {}) {
  return new URL(`?${q({ run, tool, host, ...extra })}`, base).href;
}

async function shot(name) {
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: join(ARTIFACTS, `dash-${name}.png`), fullPage: true });
}

/** Opens a deep link and waits for the view element, failing on an error banner. */
async function open(run, tool, host, viewTag, extra = {}) {
  await page.goto(appUrl(run, tool, host, extra));
  const view = page.locator(`pf-tool-view > ${viewTag}, pf-tool-view > pf-message`).first();
  await view.waitFor({ timeout: TIMEOUT_MS * 2 });
  const banner = page.locator('pf-tool-view > pf-message[kind="error"]');
  if (await banner.count()) throw new Error(`error banner: ${(await banner.first().evaluate((el) => el.shadowRoot.textContent)).replace(/\s+/g, ' ')}`);
  return page.locator(`pf-tool-view > ${viewTag}`);
}

const text = async (locator) => (await locator.first().textContent()).replace(/\s+/g, ' ').trim();

function formatMs(value) {
  return `${value.toFixed(value >= 100 ? 1 : value >= 1 ? 2 : 3)} ms`;
}

/** Clicks a table's Export as CSV and returns the downloaded text. */
async function downloadCsv(table) {
  const [download] = await Promise.all([page.waitForEvent('download', { timeout: TIMEOUT_MS }), table.locator('.export').click()]);
  return readFileSync(await download.path(), 'utf8');
}

/** Export of a server-backed table: the file equals `data_csv` for the same table. */
async function checkServerCsv(table, run, tool, host, tableIndex) {
  const href = new URL(await table.locator('a.export').getAttribute('href'), page.url());
  check(href.pathname.endsWith('/data_csv'), `CSV link is not data_csv: ${href}`);
  check(String(tableIndex ?? '') === (href.searchParams.get('table') ?? ''), `CSV link exports table ${href.searchParams.get('table')}, expected ${tableIndex}`);
  const file = await downloadCsv(table);
  const expected = await api('data_csv', { run, tag: tool, host, table: tableIndex }, 'text');
  check(file === expected, `downloaded CSV differs from data_csv (${file.length} vs ${expected.length} bytes)`);
  return parseCsv(file).length - 1;
}

/** Moves the mouse onto data item `dataIndex` of series `seriesIndex` of an ECharts element. */
async function hoverChart(chart, seriesIndex, dataIndex) {
  const point = await chart.evaluate(
    (el, [s, d]) => {
      const inst = el.instance;
      const data = inst.getModel().getSeriesByIndex(s).getData();
      const layout = data.getItemLayout(d);
      let x;
      let y;
      if (!layout || Array.isArray(layout)) {
        [x, y] = inst.convertToPixel({ seriesIndex: s }, inst.getOption().series[s].data[d]);
      } else if (layout && 'cx' in layout) {
        const angle = (layout.startAngle + layout.endAngle) / 2;
        const r = (layout.r0 + layout.r) / 2;
        x = layout.cx + r * Math.cos(angle);
        y = layout.cy + r * Math.sin(angle);
      } else {
        x = layout.x + layout.width / 2;
        y = layout.y + layout.height / 2;
      }
      const box = el.shadowRoot.querySelector('.chart').getBoundingClientRect();
      return { x: box.left + x, y: box.top + y };
    },
    [seriesIndex, dataIndex],
  );
  await page.mouse.move(point.x, point.y);
  return point;
}

async function waitForChart(chart) {
  await chart.locator('canvas').first().waitFor({ timeout: TIMEOUT_MS });
  await page.waitForFunction((el) => !!el.instance, await chart.elementHandle(), { timeout: TIMEOUT_MS });
}

// --- pages --------------------------------------------------------------------------------------

async function overviewPage() {
  const [target] = await targetsFor('overview_page', ['tf_keras2_fit/session_1', 'jax_cpu_train/session_1']);
  if (!target) return 'not served';
  const { run, tool, host } = target;
  const data = await api('data', { run, tag: tool, host });
  const stepTable = data.find((t) => t?.cols?.some((c) => c.id === 'stepnum'));
  const view = await open(run, tool, host, 'pf-overview-view');
  await view.locator('.summary').waitFor();
  const average = Number(stepTable.p.steptime_ms_average);
  if (stepTable.rows.length) {
    const shown = await text(view.locator('.summary .metric dd'));
    check(shown.startsWith(formatMs(average)), `average step time shows "${shown}", data says ${average} ms`);
    await waitForChart(view.locator('pf-echart.step-time'));
    const series = await view.locator('pf-echart.step-time').evaluate((el) => el.instance.getOption().series.map((s) => s.name));
    const input = await view.locator('pf-echart.step-time').evaluate((el) => el.instance.getOption().series.find((s) => s.name === 'Input')?.itemStyle?.color);
    if (series.includes('Input')) check(input === '#e03131', `input time is not red: ${input}`);
    // Issue 28, item 9: the breakdown's shares add to 100% (a remainder row when components leave a gap).
    const shares = (await view.locator('table.breakdown tbody td:last-child').allTextContents()).map((t) => Number(t.replace('%', '')));
    const sum = shares.reduce((a, b) => a + b, 0);
    if (shares.length) check(Math.abs(sum - 100) <= 0.5, `step-time shares add to ${sum.toFixed(1)}%: ${shares}`);
  }
  // Top-10 table against framework_op_stats (without IDLE).
  const tools = await api('run_tools', { run });
  if (tools.includes('framework_op_stats')) {
    const ops = (await api('data', { run, tag: 'framework_op_stats', host }))[1];
    const col = (id) => ops.cols.findIndex((c) => c.id === id);
    const candidates = ops.rows.filter((r) => r.c[col('type')].v !== 'IDLE');
    const device = candidates.filter((r) => r.c[col('host_or_device')].v === 'Device' && r.c[col('total_self_time')].v > 0);
    const pool = (device.length ? device : candidates.filter((r) => r.c[col('host_or_device')].v === 'Host')).sort(
      (a, b) => b.c[col('total_self_time')].v - a.c[col('total_self_time')].v,
    );
    const firstOp = view.locator('.top-ops pf-data-table tbody tr').first().locator('td').nth(3);
    await firstOp.waitFor({ timeout: TIMEOUT_MS });
    check((await firstOp.textContent()) === pool[0].c[col('operation')].v, `top op "${await firstOp.textContent()}" ≠ "${pool[0].c[col('operation')].v}"`);
    const csv = parseCsv(await downloadCsv(view.locator('.top-ops pf-data-table')));
    check(csv[1][3] === pool[0].c[col('operation')].v && csv.length === 1 + Math.min(10, pool.length), 'top-ops CSV does not match the table');
  }
  await overviewWording(view, stepTable.p.hardware_type);
  await shot('overview');
  await page.emulateMedia({ colorScheme: 'dark' });
  await shot('overview-dark');
  await page.emulateMedia({ colorScheme: 'light' });
  // A recommendation link switches the tool selector.
  const link = view.locator('.recommendation a.tool-link').first();
  if (await link.count()) {
    const wanted = new URL(await link.getAttribute('href'), page.url()).searchParams.get('tool');
    await link.click();
    await page.waitForFunction((t) => new URLSearchParams(location.search).get('tool') === t, wanted, { timeout: TIMEOUT_MS });
    await page.locator('pf-tool-view > *:not(pf-skeleton)').first().waitFor({ timeout: TIMEOUT_MS * 2 });
  }
  return `${run}: average ${average} ms, ${stepTable.rows.length} steps`;
}

async function firstPaint() {
  const [target] = await targetsFor('overview_page', ['tf_keras2_fit/session_1']);
  if (!target) return 'not served';
  const url = appUrl(target.run, target.tool, target.host);
  await page.goto(url); // warms the HTTP cache and the server's tool cache
  await page.locator('pf-overview-view').waitFor({ timeout: TIMEOUT_MS * 2 });
  const times = [];
  for (let i = 0; i < 3; i++) {
    await page.goto(url);
    await page.locator('pf-overview-view .summary').waitFor({ timeout: TIMEOUT_MS });
    times.push(await page.evaluate(() => performance.getEntriesByName('pf-overview-rendered')[0]?.startTime ?? NaN));
  }
  const best = Math.min(...times);
  check(Number.isFinite(best), 'the overview did not mark its first render');
  check(best < FIRST_PAINT_BUDGET_MS, `first paint of the overview took ${best.toFixed(0)} ms (budget ${FIRST_PAINT_BUDGET_MS} ms)`);
  return `navigationStart → overview rendered: ${times.map((t) => t.toFixed(0)).join(', ')} ms (warm cache)`;
}

async function inputPipelinePage() {
  const [target] = await targetsFor('input_pipeline_analyzer', ['tf_keras2_fit/session_1']);
  if (!target) return 'not served';
  const { run, tool, host } = target;
  const data = await api('data', { run, tag: tool, host });
  const steps = data.find((t) => t?.cols?.some((c) => c.id === 'stepnum'));
  const opsIndex = data.findIndex((t) => t?.cols?.some((c) => c.id === 'opName'));
  const view = await open(run, tool, host, 'pf-input-pipeline-view');
  const conclusion = steps?.p?.input_conclusion;
  if (conclusion) check((await text(view.locator('.summary .verdict'))) === conclusion, 'verdict differs from input_conclusion');
  if (steps?.rows?.length) await waitForChart(view.locator('pf-echart.step-time'));
  let note = `${run}: ${steps?.rows?.length ?? 0} steps`;
  if (opsIndex >= 0 && data[opsIndex].rows.length) {
    const table = view.locator('section[aria-label="Input-op statistics"] pf-data-table');
    const rows = await checkServerCsv(table, run, tool, host, opsIndex);
    check(rows === data[opsIndex].rows.length, `input-op CSV has ${rows} rows, data ${data[opsIndex].rows.length}`);
    note += `, ${rows} input ops (CSV = data_csv table ${opsIndex})`;
    // "Total Time (as % of …)" holds fractions: the page shows percentages under a "%" label.
    const ops = data[opsIndex];
    const pct = ops.cols.findIndex((c) => c.id === 'timeInPercent');
    const shown = await table.evaluate((el, i) => [el.shadowRoot.querySelectorAll('thead th')[i].textContent.trim(), el.shadowRoot.querySelector('tbody tr').children[i].textContent], pct);
    const want = Math.round(ops.rows[0].c[pct].v * 1e5) / 1e3;
    check(shown[0].includes('%') && Number(shown[1]) === want, `"${shown[0]}" shows ${shown[1]}, data ${ops.rows[0].c[pct].v} → ${want}%`);
  }
  await shot('input-pipeline');
  return note;
}

async function opStatsPage() {
  const [target] = await targetsFor('framework_op_stats', ['gpu_multi_worker/GPU-multi-worker', 'tf_keras2_fit/session_1']);
  if (!target) return 'not served';
  const { run, tool, host } = target;
  const [withIdle, withoutIdle] = await api('data', { run, tag: tool, host });
  const view = await open(run, tool, host, 'pf-op-stats-view');
  const table = view.locator('pf-data-table');
  const count = async () => Number((await text(table.locator('.count'))).split(' ')[0]);
  await table.locator('tbody tr').first().waitFor();
  check((await count()) === withoutIdle.rows.length, `table shows ${await count()} rows, without-IDLE data has ${withoutIdle.rows.length}`);
  const pies = await view.locator('pf-echart.pie').count();
  check(pies >= 1 && pies <= 4, `${pies} pie charts`);
  await waitForChart(view.locator('pf-echart.pie').first());
  await shot('framework-op-stats');
  // "(%)" columns hold fractions in the payload; the page shows percentages.
  const hostPct = withoutIdle.cols.findIndex((c) => c.id === 'host_total_self_time_percent');
  const shownPct = await table.evaluate((el) => {
    const heads = [...el.shadowRoot.querySelectorAll('thead th')].map((th) => th.textContent.trim());
    return el.shadowRoot.querySelector('tbody tr').children[heads.findIndex((h) => h.startsWith('Host self-time (%)'))].textContent;
  });
  const wantPct = Math.round(withoutIdle.rows[0].c[hostPct].v * 1e5) / 1e3;
  check(Number(shownPct) === wantPct, `host self-time shows ${shownPct}%, data ${withoutIdle.rows[0].c[hostPct].v} (a fraction) → ${wantPct}%`);
  // Headers of columns with a unit drop it ("Self-time"): each value shows its own unit.
  await readableTable(table, ['Operation', 'Self-time', 'Host self-time (%)', 'FLOP rate (FLOPs/s)', 'Bound by'], 'Avg. self-time');
  await view.locator('.idle-toggle input').check();
  await page.waitForFunction(() => new URLSearchParams(location.search).get('idle') === '1');
  check((await count()) === withIdle.rows.length, 'Include IDLE did not switch to the with-IDLE table');
  const rows = await checkServerCsv(table, run, tool, host, 0);
  check(rows === withIdle.rows.length, 'CSV row count differs');
  await view.locator('select[name="side"]').selectOption('Host');
  const hostRows = withIdle.rows.filter((r) => r.c[1].v === 'Host').length;
  check((await count()) === hostRows, `Host filter shows ${await count()} rows, data has ${hostRows}`);
  // Issue 28, item 9: one count, against the whole table ("54 of 54 operations" stood beside "7 of 54 rows").
  const said = await text(table.locator('.count'));
  const want = hostRows === withIdle.rows.length ? `${hostRows} rows` : `${hostRows} of ${withIdle.rows.length} rows`;
  check(said === want && (await view.locator('.filters .muted').count()) === 0, `count says "${said}" (want "${want}", and no second count)`);
  return `${run}: ${withoutIdle.rows.length} ops (${withIdle.rows.length} with IDLE), ${pies} pies, CSV = data_csv`;
}

/**
 * At 1366x768: the columns a reader compares first are in view without scrolling sideways, the
 * Columns menu shows a hidden one, the header stays in view when the table scrolls, and a click
 * anywhere in a header cell (its bottom edge too) sorts.
 */
async function readableTable(table, mustSee, hidden) {
  await page.setViewportSize({ width: 1366, height: 768 });
  try {
    const out = await table.evaluate((el, labels) => {
      const root = el.shadowRoot;
      const box = root.querySelector('.scroll').getBoundingClientRect();
      const heads = [...root.querySelectorAll('thead th')];
      return labels.filter((label) => {
        const th = heads.find((h) => h.textContent.trim().startsWith(label));
        return !th || th.getBoundingClientRect().right > box.right + 1;
      });
    }, mustSee);
    check(out.length === 0, `columns not in view at 1366 px: ${out.join(', ')}`);
    const headers = () => table.locator('thead th').allTextContents();
    check(!(await headers()).some((h) => h.trim().startsWith(hidden)), `${hidden} is shown although it starts hidden`);
    await table.locator('details.columns summary').click();
    await table.locator('details.columns label', { hasText: hidden }).locator('input').check();
    check((await headers()).some((h) => h.trim().startsWith(hidden)), `the Columns menu did not show ${hidden}`);
    await table.locator('details.columns summary').click();
    const th = table.locator('thead th').nth(1);
    const box = await th.boundingBox();
    await page.mouse.click(box.x + box.width / 2, box.y + box.height - 3);
    check((await th.getAttribute('aria-sort')) !== 'none', 'a click at the bottom of a header cell does not sort');
    await page.mouse.click(box.x + box.width / 2, box.y + box.height - 3);
    await page.mouse.click(box.x + box.width / 2, box.y + box.height - 3);
    await table.locator('.scroll').evaluate((el) => el.scrollBy(0, 400));
    const sticky = await table.evaluate((el) => {
      const scroll = el.shadowRoot.querySelector('.scroll');
      const th = el.shadowRoot.querySelector('thead th');
      return scroll.scrollTop === 0 || Math.abs(th.getBoundingClientRect().top - scroll.getBoundingClientRect().top) < 2;
    });
    check(sticky, 'the header row scrolls out of view');
    await table.locator('.scroll').evaluate((el) => el.scrollTo(0, 0));
  } finally {
    await page.setViewportSize({ width: 1280, height: 900 });
  }
}

/** Metrics that do not apply read "n/a"; the recommendation names the profile's framework. */
async function overviewWording(view, hardware) {
  const metric = async (label) => {
    const dt = view.locator('.summary .metric dt', { hasText: label });
    return (await dt.count()) ? (await dt.first().locator('xpath=following-sibling::dd[1]').textContent()).trim() : null;
  };
  const duty = await metric('Device duty cycle');
  if (hardware === 'CPU_ONLY') check(duty === null || duty.startsWith('n/a'), `Device duty cycle on a CPU profile shows "${duty}"`);
  const mxu = await metric('MXU utilization');
  if (hardware !== 'TPU') check(mxu === null || mxu.startsWith('n/a'), `MXU utilization off TPU shows "${mxu}"`);
  // A JAX run's recommendation points at JAX's documentation, not TensorFlow's.
  const [jax] = await targetsFor('overview_page', ['jax_cpu_train/session_1']);
  if (!jax || !jax.run.startsWith('jax')) return;
  const jaxView = await open(jax.run, 'overview_page', jax.host, 'pf-overview-view');
  const tips = jaxView.locator('.recommendation');
  await tips.waitFor();
  const tipText = await text(tips);
  check(!/TF2|tf\.data API/.test(tipText), `a JAX run gets TensorFlow advice: "${tipText}"`);
  const hrefs = await tips.locator('a[href^="http"]').evaluateAll((links) => links.map((a) => a.href));
  check(hrefs.length > 0 && hrefs.every((h) => !h.includes('tensorflow.org')) && hrefs.some((h) => h.includes('docs.jax.dev')), `JAX links: ${hrefs}`);
  await shot('overview-jax');
  await page.goBack();
}

async function kernelStatsPage() {
  const [target] = await targetsFor('kernel_stats', ['gpu_multi_worker/GPU-multi-worker']);
  if (!target) return 'not served';
  const host = (await hostsOf(target.run, 'kernel_stats')).includes('ALL_HOSTS') ? 'ALL_HOSTS' : target.host;
  const data = await api('data', { run: target.run, tag: 'kernel_stats', host });
  const table = Array.isArray(data) ? data[0] : data;
  const names = new Set(table.rows.map((r) => r.c[table.cols.findIndex((c) => c.id === 'kernel_name')].v));
  const view = await open(target.run, 'kernel_stats', host, 'pf-kernel-stats-view');
  const shown = await text(view.locator('.summary .metric dd'));
  check(shown === String(names.size), `distinct kernels shows ${shown}, data has ${names.size}`);
  await waitForChart(view.locator('pf-echart.pie'));
  const rows = await checkServerCsv(view.locator('pf-data-table'), target.run, 'kernel_stats', host, undefined);
  check(rows === table.rows.length, 'kernel CSV row count differs');
  await readableTable(view.locator('pf-data-table'), ['Kernel Name', 'Op Name', 'Total Duration', 'Avg Duration'], 'Max Duration');
  // Long kernel names: one line, the whole name in the cell (cut by an ellipsis only where the
  // width runs out), the full name on hover.
  const cell = view.locator('pf-data-table tbody td.name').first();
  const full = await cell.getAttribute('title');
  check(names.has(full) && (await cell.textContent()).trim() === full, 'a long kernel name is not in its cell whole with the full name on hover');
  const rowHeight = await view.locator('pf-data-table tbody tr').first().evaluate((tr) => tr.getBoundingClientRect().height);
  check(rowHeight < 40, `kernel rows are ${rowHeight} px high`);
  const legend = await view.locator('pf-echart.pie').evaluate((el) => {
    const option = el.instance.getOption();
    return option.series[0].data.map((d) => option.legend[0].formatter(d.name));
  });
  check(new Set(legend).size === legend.length && legend.every((l) => l.length <= 55), `pie legend entries are not distinct short names: ${legend}`);
  await view.locator('input[name="kernel"]').fill('zz_no_kernel_zz');
  check((await view.locator('pf-data-table tbody tr').count()) === 0, 'kernel filter matching nothing still shows rows');
  await shot('kernel-stats');
  return `${target.run}: ${names.size} kernels, ${table.rows.length} rows`;
}

async function notApplicable() {
  const runs = await api('runs');
  const run = runs.find((r) => r.startsWith('jax_cpu_train')) ?? runs[0];
  const response = await api('data', { run, tag: 'kernel_stats' }, 'response');
  if (response.status !== 404) return `skipped (kernel_stats answered ${response.status})`;
  const reason = (await response.json()).error?.message;
  // CPU runs do not list kernel_stats; offer it so the page asks and shows the server's reason.
  await page.route(`**/run_tools?*`, async (route) => {
    const tools = await (await route.fetch()).json();
    await route.fulfill({ json: tools.includes('kernel_stats') ? tools : [...tools, 'kernel_stats'] });
  });
  try {
    await page.goto(appUrl(run, 'kernel_stats', ''));
    const card = page.locator('pf-tool-view > pf-message[kind="info"]');
    await card.waitFor({ timeout: TIMEOUT_MS });
    const shown = await card.evaluate((el) => el.shadowRoot.textContent.replace(/\s+/g, ' '));
    check(shown.includes(reason), `info card "${shown}" lacks the server's reason "${reason}"`);
    await shot('kernel-stats-not-applicable');
  } finally {
    await page.unroute('**/run_tools?*');
  }
  return `${run}: "${reason.slice(0, 60)}…"`;
}

async function memoryPage() {
  const targets = await targetsFor('memory_profile', ['tf_memory/session_1', 'gpu_multi_worker/GPU-multi-worker']);
  let note = '';
  for (const { run, tool, host } of targets) {
    const data = await api('data', { run, tag: tool, host });
    const ids = data.memoryIds?.length ? data.memoryIds : Object.keys(data.memoryProfilePerAllocator ?? {});
    if (!ids.length) continue;
    const id = ids[ids.length - 1];
    const view = await open(run, tool, host, 'pf-memory-profile-view', { memory_id: id });
    await view.locator('.summary').waitFor();
    const options = await view.locator('select[name="memory_id"] option').evaluateAll((o) => o.map((x) => x.value));
    check(JSON.stringify(options) === JSON.stringify(ids), `memory ids ${options} ≠ ${ids}`);
    check((await view.locator('select[name="memory_id"]').inputValue()) === id, 'memory_id from the URL is not selected');
    const allocator = data.memoryProfilePerAllocator[id];
    const lifetimeMiB = Number(allocator.profileSummary.peakBytesUsageLifetime) / 2 ** 20;
    const expected = lifetimeMiB >= 1024 ? `${(lifetimeMiB / 1024).toFixed(2)} GiB` : `${lifetimeMiB.toFixed(lifetimeMiB >= 10 ? 1 : 2)} MiB`;
    const shown = await text(view.locator('.summary .metric dd'));
    check(shown === expected, `peak usage shows ${shown}, data says ${expected}`);
    // The counts are over every event (the server's), not the 1000 sampled snapshots.
    const counts = data.allocatorEventCounts?.[id];
    check(counts, `no allocatorEventCounts for ${id}`);
    const summaryText = await text(view.locator('.summary'));
    const countText = `Allocations / deallocations ${counts.allocations} / ${counts.deallocations}`;
    check(summaryText.includes(countText), `summary "${summaryText}" lacks "${countText}"`);
    const breakdown = view.locator('section[aria-label="Memory breakdown at the peak"] pf-data-table');
    const count = Number((await text(breakdown.locator('.count'))).split(' ')[0]);
    check(count === allocator.activeAllocations.length, `breakdown has ${count} rows, data ${allocator.activeAllocations.length}`);
    const csv = parseCsv(await downloadCsv(breakdown));
    check(csv.length - 1 === count && csv[0][0] === 'Op name', 'breakdown CSV differs from the table');
    const chart = view.locator('pf-echart.memory-timeline');
    await waitForChart(chart);
    const points = allocator.sampledTimelineSnapshots?.length || allocator.memoryProfileSnapshots.length;
    await hoverChart(chart, 1, Math.floor(points / 2));
    await shot(`memory-profile-${run.split('/')[0]}`);
    note += `${run} ${id}: peak ${expected}, ${count} live allocations; `;
  }
  return note || 'not served (or no allocator events)';
}

async function podViewerPage() {
  const [target] = await targetsFor('pod_viewer', ['jax_two_hosts/multi_jax2__xprof_client', 'tf_keras2_fit/session_1']);
  if (!target) return 'not served';
  const { run, tool, host } = target;
  const data = await api('data', { run, tag: tool, host });
  const steps = data.podStatsSequence?.podStatsMap ?? [];
  if (!steps.length) return `${run}: no steps`;
  const index = Math.min(2, steps.length - 1);
  const view = await open(run, tool, host, 'pf-pod-viewer-view', { step: steps[index].stepNum });
  const slider = view.locator('input.step-slider');
  check((await slider.getAttribute('max')) === String(steps.length - 1), 'slider range differs from the steps');
  check((await slider.inputValue()) === String(index), 'step from the URL is not selected');
  const chart = view.locator('pf-echart.pod-chart');
  await waitForChart(chart);
  const cores = Object.keys(steps[index].podStatsPerCore).sort((a, b) => a - b);
  const last = cores[cores.length - 1];
  const seriesIndex = await chart.evaluate((el, coreIndex) => el.instance.getOption().series.findIndex((s) => s.data[coreIndex] > 0), cores.length - 1);
  await hoverChart(chart, Math.max(0, seriesIndex), cores.length - 1);
  const heading = view.locator('.core-detail h2');
  const want = `${steps[index].podStatsPerCore[last].hostName} core ${last}`;
  await page.waitForFunction(([el, w]) => el.textContent.trim() === w, [await heading.elementHandle(), want], { timeout: 5000 }).catch(() => {});
  check((await text(heading)) === want, `hover card shows "${await text(heading)}", expected "${want}"`);
  await slider.fill('0');
  await page.waitForFunction((s) => new URLSearchParams(location.search).get('step') === String(s), steps[0].stepNum);
  await shot('pod-viewer');
  return `${run}: ${steps.length} steps, ${cores.length} cores`;
}

async function tfDataPage() {
  const [target] = await targetsFor('tf_data_bottleneck_analysis', ['tf_keras2_fit/session_1']);
  if (!target) return 'not served';
  const { run, tool, host } = target;
  const data = await api('data', { run, tag: tool, host });
  const graph = data.find((t) => t?.cols?.some((c) => c.id === 'parent'));
  const summary = data.find((t) => t?.p?.summary_message);
  const view = await open(run, tool, host, 'pf-tf-data-view');
  check((await text(view.locator('.summary p.statement'))) === summary.p.summary_message, 'summary differs from summary_message');
  if (graph?.rows?.length) {
    const first = graph.rows[0].c;
    const nodes = graph.rows.filter((r) => r.c[0].v === first[0].v && r.c[1].v === first[1].v && r.c[2].v === first[2].v);
    check((await view.locator('svg.tree g.node').count()) === nodes.length, 'graph node count differs from the data');
    const bottleneck = nodes.find((r) => r.c[5].v === 2);
    if (bottleneck) {
      const name = /<b>([^<]*)<\/b>/.exec(bottleneck.c[3].f ?? '')?.[1];
      const outlined = await view.locator('svg.tree rect.bottleneck').count();
      check(outlined === 1, `${outlined} nodes outlined as bottleneck`);
      const label = await view.locator('svg.tree g.node:has(rect.bottleneck) text.name').textContent();
      check(!name || label === name, `bottleneck node "${label}" ≠ "${name}"`);
      check((await view.locator('svg.tree path.critical').count()) > 0, 'no critical-path edge in bold');
    }
    check(!(await view.locator('svg.tree').innerHTML()).includes('<div'), 'HTML from the payload reached the graph');
  }
  await shot('tf-data-bottleneck');
  return `${run}: ${graph?.rows?.length ?? 0} graph rows`;
}

/** A profile string with markup stays text in a dashboard table and in a chart. */
async function markupStaysText() {
  const [target] = await targetsFor('framework_op_stats', ['tf_keras2_fit/session_1']);
  if (!target) return 'not served';
  const { run, tool, host } = target;
  await page.route('**/data?*tag=framework_op_stats*', async (route) => {
    const payload = await (await route.fetch()).json();
    for (const table of payload) {
      const op = table.cols.findIndex((c) => c.id === 'operation');
      const type = table.cols.findIndex((c) => c.id === 'type');
      for (const row of table.rows) {
        if (row.c[type].v !== 'IDLE') {
          row.c[op].v = XSS;
          row.c[type].v = XSS;
          break;
        }
      }
    }
    await route.fulfill({ json: payload });
  });
  try {
    const view = await open(run, tool, host, 'pf-op-stats-view');
    const cells = await view.locator('pf-data-table tbody td').evaluateAll((tds, x) => tds.filter((td) => td.textContent === x).length, XSS);
    check(cells >= 1, 'the markup string is not shown as text in the op table');
    const chart = view.locator('pf-echart.pie').first();
    await waitForChart(chart);
    const sliceIndex = await chart.evaluate((el, x) => el.instance.getOption().series[0].data.findIndex((d) => d.name === x), XSS);
    check(sliceIndex >= 0, 'the markup string is not a pie slice');
    const renderMode = await chart.evaluate((el) => el.instance.getOption().tooltip[0].renderMode);
    check(renderMode === 'richText', `tooltips render as ${renderMode}, not rich text`);
    await hoverChart(chart, 0, sliceIndex);
    await page.waitForTimeout(300);
    // Overview's top-10 table gets the same payload.
    const overview = await open(run, 'overview_page', (await hostsOf(run, 'overview_page'))[0] ?? '', 'pf-overview-view');
    await overview.locator('.top-ops pf-data-table tbody tr').first().waitFor({ timeout: TIMEOUT_MS });
    const inTop = await overview.locator('.top-ops td').evaluateAll((tds, x) => tds.some((td) => td.textContent === x), XSS);
    check(inTop, 'the markup string is not shown as text in the overview top-10 table');
    const images = await page.evaluate(() => {
      const roots = [document];
      const found = [];
      while (roots.length) {
        const root = roots.pop();
        for (const el of root.querySelectorAll('*')) {
          if (el.tagName === 'IMG') found.push(el);
          if (el.shadowRoot) roots.push(el.shadowRoot);
        }
      }
      return found.length;
    });
    check(images === 0, `${images} <img> element(s) appeared in the page`);
    await shot('markup-as-text');
  } finally {
    await page.unroute('**/data?*tag=framework_op_stats*');
  }
  return 'op table, top-10 table and pie tooltip keep the string as text';
}

async function emptyLogdir() {
  const diagnosis = await api('diagnose');
  await page.route('**/data/plugin/profile/runs*', (route) => route.fulfill({ json: [] }));
  try {
    await page.goto(base.href);
    const card = page.locator('pf-diagnosis .card');
    await card.waitFor({ timeout: TIMEOUT_MS });
    await page.waitForFunction((el) => !el.textContent.includes('Looking at'), await card.elementHandle());
    const shown = (await card.textContent()).replace(/\s+/g, ' ');
    check(shown.includes(diagnosis.logdir), 'the diagnosis does not name the log directory');
    check(shown.includes('jax.profiler.start_server(9999)') && shown.includes('tf.profiler.experimental.server.start(6009)'), 'no capture how-to');
    check(!shown.includes('No profile data was found'), 'the old empty message is shown');
    await shot('empty-logdir');
    const button = page.locator('pf-diagnosis button.primary');
    if (await button.count()) {
      await button.click();
      await page.locator('pf-capture-dialog dialog').waitFor({ state: 'visible' });
      await page.keyboard.press('Escape');
    }
  } finally {
    await page.unroute('**/data/plugin/profile/runs*');
  }
  return `diagnosis of ${diagnosis.logdir}: ${diagnosis.sessions} sessions, ${diagnosis.skipped.length} skipped`;
}

/**
 * The dialog follows an async job; the capture's replies are stubbed (no profiler server here), but
 * the page must ask for it as the real server requires: a POST with the token from capture_token.
 */
async function captureProgress() {
  const config = await api('config');
  if (config.hideCaptureProfileButton) return 'capture hidden on this server';
  const runs = await api('runs');
  const { token } = await api('capture_token');
  let polls = 0;
  await page.route('**/capture_profile', (route) => {
    const request = route.request();
    check(request.method() === 'POST', `capture was asked with ${request.method()}, not POST`);
    check(new URLSearchParams(request.postData() ?? '').get('async') === '1', 'capture was not asked with async=1');
    check(request.headers()['x-tbprof-token'] === token, "capture was asked without the server's token");
    return route.fulfill({ json: { job: 'job-1' } });
  });
  await page.route('**/capture_status?*', (route) => {
    const now = Date.now() / 1000;
    polls++;
    const status = polls < 3
      ? { state: 'running', phase: 'tracing', started_at: now, expected_end: now + 9 }
      : polls < 5
        ? { state: 'running', phase: 'collecting', started_at: now, expected_end: now }
        : { state: 'done', phase: 'writing', result: 'Capture profile successfully. Please refresh.', session: runs[runs.length - 1].split('/').pop() };
    return route.fulfill({ json: status });
  });
  try {
    await page.goto(base.href);
    await page.locator('pf-app header button.primary').click();
    // The form's labels and controls do not run into each other (1366x768 and a narrow window).
    for (const width of [1366, 800]) {
      await page.setViewportSize({ width, height: 768 });
      const overlaps = await page.locator('pf-capture-dialog').evaluate((el) => {
        const boxes = [...el.shadowRoot.querySelectorAll('form .row .field > label, form .row input, form .row select')]
          .filter((e) => e.getClientRects().length)
          .map((e) => ({ name: e.id || e.textContent.trim(), r: e.getBoundingClientRect() }));
        const out = [];
        for (let i = 0; i < boxes.length; i++) {
          for (let j = i + 1; j < boxes.length; j++) {
            const a = boxes[i].r;
            const b = boxes[j].r;
            const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
            const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
            if (w > 1 && h > 1) out.push(`${boxes[i].name} × ${boxes[j].name}`);
          }
        }
        return out;
      });
      check(overlaps.length === 0, `capture dialog at ${width} px: overlapping ${overlaps.join('; ')}`);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.locator('pf-capture-dialog #service-addr').fill('localhost:9999');
    await page.locator('pf-capture-dialog button[type="submit"]').click();
    const status = page.locator('pf-capture-dialog .status');
    await page.waitForFunction((el) => /Tracing… \d+ s left/.test(el.textContent), await status.elementHandle(), { timeout: TIMEOUT_MS });
    await shot('capture-progress');
    await page.waitForFunction((el) => /Collecting/.test(el.textContent), await status.elementHandle(), { timeout: TIMEOUT_MS });
    await page.locator('pf-capture-dialog .status.done').waitFor({ timeout: TIMEOUT_MS });
    const done = await text(page.locator('pf-capture-dialog .status.done'));
    check(!/refresh/i.test(done) && /selected/.test(done), `after the capture the dialog says "${done}"`);
    await page.waitForFunction((r) => new URLSearchParams(location.search).get('run') === r, runs[runs.length - 1], { timeout: TIMEOUT_MS });
  } finally {
    await page.unroute('**/capture_profile');
    await page.unroute('**/capture_status?*');
  }
  return `countdown, phase and the captured session selected after ${polls} polls`;
}

// --- main ---------------------------------------------------------------------------------------

async function main() {
  const browser = await launchChromium();
  let failed = 0;
  try {
    page = await openPage(browser, base.origin, problems, { onRequest: () => requests++ });
    page.on('console', (message) => {
      if (message.type() !== 'error') return;
      const from = message.location()?.url ?? '';
      if (/^Failed to load resource.*status of 404/.test(message.text()) && /\/data\?/.test(from)) return;
      problems.push(`console error in "${step}": ${message.text()} ${from}`);
    });
    page.on('pageerror', (error) => problems.push(`page error in "${step}": ${error.message}`));
    page.on('dialog', (dialog) => {
      problems.push(`unexpected dialog: ${dialog.message()}`);
      void dialog.dismiss();
    });

    const checks = [
      ['overview', overviewPage],
      ['first paint', firstPaint],
      ['input pipeline', inputPipelinePage],
      ['TF stats', opStatsPage],
      ['kernel stats', kernelStatsPage],
      ['NOT_APPLICABLE', notApplicable],
      ['memory profile', memoryPage],
      ['pod viewer', podViewerPage],
      ['tf.data', tfDataPage],
      ['markup stays text', markupStaysText],
      ['empty logdir', emptyLogdir],
      ['capture progress', captureProgress],
    ];
    for (const [name, fn] of checks) {
      step = name;
      const before = requests;
      try {
        const note = await fn();
        results.push(`ok   ${name}: ${note} [${requests - before} requests]`);
      } catch (error) {
        failed++;
        results.push(`FAIL ${name}: ${error?.message ?? error}`);
        await page.screenshot({ path: join(ARTIFACTS, `dash-failure-${name.replace(/\W+/g, '-')}.png`), fullPage: true }).catch(() => {});
      }
    }
    step = 'page health';
  } finally {
    await browser.close();
  }
  report(results, failed, problems, `; ${requests} requests; screenshots in ${ARTIFACTS}`);
}

main().catch((error) => abort(error, step));
