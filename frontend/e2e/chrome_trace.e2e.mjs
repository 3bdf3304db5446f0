// Browser test of the Chrome-trace profiles (ProfilerHook timelines, PyTorch traces) in real
// headless Chromium.
//
//   PROFILE_E2E_URL=http://127.0.0.1:8791/ PROFILE_E2E_ARTIFACTS=/tmp/shots node e2e/chrome_trace.e2e.mjs
//
// Every run whose tools include a Chrome-trace tool is opened with every such tool it lists
// (pytorch_overview, pytorch_operators, pytorch_kernels, pytorch_distributed, tensor_memory,
// framework_op_stats of a timeline, trace_viewer@), through a deep link. The PyTorch overview
// dashboard must show the average step and draw its per-step chart. Table pages must show
// each table the server sent, with its title and row count; their first table's Export as CSV
// must equal `data_csv`. The operator view, grouped by operator and input shape, must show the
// server's rows for that grouping. The trace viewer must draw its canvas and list the trace's processes.
// Fails on any request to another origin, console error, page error or CSP violation.
// Screenshots of every page land in PROFILE_E2E_ARTIFACTS as chrome-<run>-<tool>.png.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  apiClient,
  check,
  e2eTarget,
  launchChromium,
  openPage,
  parseCsv,
  query as q,
  watchConsole,
  abort,
  report,
} from './browser.mjs';

const { base, pluginBase, artifacts: ARTIFACTS } = e2eTarget();
const api = apiClient(pluginBase);
const TIMEOUT_MS = Number(process.env.PROFILE_E2E_TIMEOUT_MS || 60000);
const TABLE_TOOLS = ['pytorch_overview', 'pytorch_operators', 'pytorch_kernels', 'pytorch_distributed', 'tensor_memory'];

const problems = [];
const results = [];
let page;
let step = 'start';

const hostsOf = async (run, tool) => (await api('hosts', { run, tag: tool })).map((h) => h.hostname ?? h);
const appUrl = (run, tool, host) => new URL(`?${q({ run, tool, host })}`, base).href;
const shotName = (run, tool) => `chrome-${run}-${tool}`.replace(/[^A-Za-z0-9_-]+/g, '_');

async function shot(run, tool) {
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: join(ARTIFACTS, `${shotName(run, tool)}.png`), fullPage: true });
}

async function open(run, tool, host, viewTag) {
  await page.goto(appUrl(run, tool, host));
  const view = page.locator(`pf-tool-view > ${viewTag}, pf-tool-view > pf-message`).first();
  await view.waitFor({ timeout: TIMEOUT_MS * 2 });
  const banner = page.locator('pf-tool-view > pf-message');
  if (await banner.count()) throw new Error(`message instead of ${viewTag}: ${(await banner.first().evaluate((el) => el.shadowRoot.textContent)).replace(/\s+/g, ' ')}`);
  return page.locator(`pf-tool-view > ${viewTag}`);
}

/** A table page: every non-empty table with its title and row count; CSV of the first = data_csv. */
async function tablePage(run, tool, host) {
  const data = await api('data', { run, tag: tool, host });
  // A table the server sends without rows and with a reason is said, not drawn empty.
  const said = data.filter((t) => t?.cols?.length && !t.rows.length && t.p?.empty_reason);
  const tables = data.filter((t) => t?.cols?.length && !said.includes(t));
  const dashboard = tool === 'pytorch_overview';
  const viewTag = { pytorch_overview: 'pf-pytorch-overview-view', pytorch_operators: 'pf-pytorch-operators-view' }[tool] ?? 'pf-datatable-view';
  const view = await open(run, tool, host, viewTag);
  if (dashboard) {
    // The dashboard's headline is the breakdown's average row; its chart stacks every step.
    const average = tables[0].p.average_step_time_us;
    const headline = (await view.locator('section[aria-label="Average step"] h2').textContent()).replace(/,/g, '');
    // In the unit that suits it ("43.3 s", "812 ms"), to 3 significant digits.
    const [, value, unit] = headline.match(/([\d.]+) (ns|µs|ms|s)\b/) ?? [];
    const shownUs = Number(value) * { ns: 1e-3, 'µs': 1, ms: 1e3, s: 1e6 }[unit];
    check(Math.abs(shownUs - Number(average)) <= 0.006 * Number(average), `headline "${headline}" vs ${average} us`);
    check(!/\d{5}/.test(headline), `headline "${headline}" is not in a readable unit`);
    const parts = (await view.locator('section[aria-label="Average step"] .metric dd').allTextContents()).join(' | ');
    check(parts.length > 0 && !/\d{4,} us\b/.test(parts.replace(/,/g, '')), `the breakdown shows raw microseconds: ${parts}`);
    if (tables[0].rows.length > 1) await view.locator('pf-echart.steps canvas').first().waitFor({ timeout: TIMEOUT_MS });
  }
  const shown = view.locator('pf-data-table');
  await shown.first().waitFor({ timeout: TIMEOUT_MS });
  check((await shown.count()) === tables.length, `${await shown.count()} tables shown, server sent ${tables.length}`);
  const titles = await view.locator('section h2').allTextContents();
  const reasons = await view.locator('p.empty-reason').allTextContents();
  for (const table of said) {
    check(titles.includes(table.p.title) && reasons.includes(table.p.empty_reason), `"${table.p.title}" does not say "${table.p.empty_reason}"`);
  }
  for (const table of tables) check(titles.includes(table.p.title), `title "${table.p.title}" not shown`);
  // Issue 28, item 9: the title is the heading, not a raw "Properties (1) > title: ..." panel.
  const raw = await view.locator('details > summary', { hasText: 'Properties' }).allTextContents();
  const onlyTitle = tables.every((t) => Object.keys(t.p ?? {}).every((key) => key === 'title'));
  check(!onlyTitle || raw.length === 0, `raw metadata panels shown: ${raw}`);
  for (let i = 0; i < tables.length; i++) {
    const count = (await shown.nth(i).locator('.count').textContent()).trim();
    const n = tables[i].rows.length;
    check(count === `${n} ${n === 1 ? 'row' : 'rows'}`, `table ${i} says "${count}", server sent ${n} rows`);
  }
  if (tables[0].cols.some((c) => c.id === 'name' && c.type === 'string') && tables[0].rows.length) {
    // A long kernel or operator name stays on one line (ellipsis, full name on hover).
    const tallest = await shown.first().evaluate((el) => Math.max(...[...el.shadowRoot.querySelectorAll('tbody tr')].map((tr) => tr.getBoundingClientRect().height)));
    const names = await shown.first().evaluate((el) => el.shadowRoot.querySelectorAll('td.name').length);
    check(names > 0 && tallest < 48, `name cells ${names}, tallest row ${tallest} px: long names wrap`);
  }
  const first = data.findIndex((t) => t?.cols?.length);
  const [download] = await Promise.all([page.waitForEvent('download', { timeout: TIMEOUT_MS }), shown.first().locator('.export').click()]);
  const file = readFileSync(await download.path(), 'utf8');
  const expected = await api('data_csv', { run, tag: tool, host, table: first }, 'text');
  check(file === expected, `downloaded CSV differs from data_csv (${file.length} vs ${expected.length} bytes)`);
  check(parseCsv(file).length - 1 === tables[0].rows.length, 'CSV row count differs from the table');
  await shot(run, tool);
  const grouped = tool === 'pytorch_operators' ? `; ${await groupByShape(run, tool, host, view)}` : '';
  const saidNote = said.length ? `; ${said.map((t) => t.p.title).join(', ')} says why it is empty` : '';
  return `${tables.length} tables (${tables.map((t) => t.rows.length).join('/')} rows), CSV = data_csv${grouped}${saidNote}`;
}

/** The operator view grouped by operator and input shape: the server's rows, under its title. */
async function groupByShape(run, tool, host, view) {
  const [table] = await api('data', { run, tag: tool, host, group_by: 'input_shape' });
  await view.locator('select[name="group_by"]').selectOption('input_shape');
  const heading = view.locator(`section[aria-label="${table.p.title}"]`);
  await heading.waitFor({ timeout: TIMEOUT_MS });
  const n = table.rows.length;
  const count = (await heading.locator('pf-data-table .count').textContent()).trim();
  check(count === `${n} ${n === 1 ? 'row' : 'rows'}`, `by input shape says "${count}", server sent ${n} rows`);
  check(page.url().includes('group_by=input_shape'), 'the grouping is not in the address');
  await shot(run, `${tool}-input_shape`);
  return `by input shape ${n} rows`;
}

async function opStatsPage(run, tool, host) {
  const view = await open(run, tool, host, 'pf-op-stats-view');
  await view.locator('pf-data-table tbody tr').first().waitFor({ timeout: TIMEOUT_MS });
  const [, withoutIdle] = await api('data', { run, tag: tool, host });
  const count = (await view.locator('pf-data-table .count').first().textContent()).trim();
  check(count.startsWith(`${withoutIdle.rows.length} `), `TF stats shows "${count}", server has ${withoutIdle.rows.length} ops`);
  const pie = view.locator('pf-echart.pie').first();
  await pie.locator('canvas').first().waitFor({ timeout: TIMEOUT_MS });
  await page.waitForFunction((el) => !!el.instance, await pie.elementHandle(), { timeout: TIMEOUT_MS });
  await page.waitForTimeout(300); // the pies animate in
  await shot(run, tool);
  return `TF stats: ${count}`;
}

async function tracePage(run, tool, host) {
  const view = await open(run, tool, host, 'pf-trace-view');
  await view.locator('canvas').first().waitFor({ timeout: TIMEOUT_MS });
  const window = await api('data', { run, tag: tool, host, format: 'columnar' });
  check(window.processes.length > 0 && window.returned > 0, 'the first window has no events');
  await page.waitForTimeout(500); // let the canvas paint before the screenshot
  const counters = window.rows.filter((r) => Array.isArray(r.value)).length;
  const chart = counters ? await counterChart(view) : '';
  await shot(run, tool);
  return `${window.processes.length} processes, ${window.returned} events in the first window${chart}`;
}

/**
 * Counter rows (allocator memory) are drawn as filled step charts: scrolled to the first one,
 * the canvas columns of its band reach different heights (slices would all share one top), its
 * scale is labelled, and hovering a sample shows its value with units.
 */
async function counterChart(view) {
  const timeline = view.locator('pf-trace-timeline');
  const band = await timeline.evaluate(async (el) => {
    const win = el.model.windows().primary;
    const key = [...win.tracks.values()].find((t) => t.value)?.key;
    const track = el.model.layout.byKey.get(key);
    el.model.scrollTo(track.y - 40);
    await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
    return { y: track.y - el.model.scrollTop, height: track.height, name: track.name, drawn: el.countersDrawn };
  });
  check(band.drawn > 0, `no counter chart drawn for ${band.name}`);
  check(band.height >= 3 * 18, `counter row ${band.name} is ${band.height}px tall, too flat for a chart`);
  const tops = await timeline.evaluate((el, b) => {
    const c = el.shadowRoot.querySelector('canvas');
    const ctx = c.getContext('2d');
    const dpr = c.width / c.clientWidth;
    const [gutter, ruler] = [200, 26]; // GUTTER_PX, RULER_PX of renderer.ts
    const y0 = Math.round((ruler + b.y) * dpr);
    const h = Math.round(b.height * dpr);
    const x0 = Math.round((gutter + 260) * dpr); // right of the scale label
    const data = ctx.getImageData(x0, y0, c.width - x0, h).data;
    const width = c.width - x0;
    const tops = new Set();
    for (let x = 0; x < width; x += 3) {
      let top = -1;
      for (let y = 2; y < h - 1; y++) {
        const i = (y * width + x) * 4;
        const above = ((y - 1) * width + x) * 4;
        if (Math.abs(data[i] - data[above]) + Math.abs(data[i + 1] - data[above + 1]) + Math.abs(data[i + 2] - data[above + 2]) > 60) { top = y; break; }
      }
      if (top >= 0) tops.add(top);
    }
    return [...tops];
  }, band);
  check(tops.length >= 3, `counter row ${band.name} looks flat: edge rows ${JSON.stringify(tops)}`);
  const lines = await timeline.evaluate(async (el, b) => {
    const c = el.shadowRoot.querySelector('canvas');
    const r = c.getBoundingClientRect();
    const win = el.model.windows().primary;
    const track = [...win.tracks.values()].find((t) => t.value);
    const i = track.value.length - 1;
    const x = (track.beginMs[i] + Math.min(track.endMs[i], el.model.viewport.endMs)) / 2;
    const px = ((x - el.model.viewport.startMs) / (el.model.viewport.endMs - el.model.viewport.startMs)) * el.model.viewport.widthPx;
    c.dispatchEvent(new PointerEvent('pointermove', { clientX: r.left + 200 + px, clientY: r.top + 26 + b.y + b.height - 4, bubbles: true }));
    await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
    return el.tooltip()?.lines ?? [];
  }, band);
  check(lines.some((l) => /\d (B|KiB|MiB|GiB)\b/.test(l)), `hovering ${band.name} shows ${JSON.stringify(lines)}, no value in bytes`);
  return `; counter ${band.name} charted, tooltip "${lines[0]}"`;
}

async function checkRun(run, tools) {
  const notes = [];
  for (const tool of tools) {
    const hosts = await hostsOf(run, tool);
    const host = hosts.includes('ALL_HOSTS') ? 'ALL_HOSTS' : hosts[0] ?? '';
    step = `${run} ${tool}`;
    let note;
    if (TABLE_TOOLS.includes(tool)) note = await tablePage(run, tool, host);
    else if (tool === 'framework_op_stats') note = await opStatsPage(run, tool, host);
    else if (tool === 'trace_viewer@') note = await tracePage(run, tool, host);
    else continue;
    notes.push(`${tool}: ${note}`);
  }
  return notes.join('; ');
}

async function main() {
  const browser = await launchChromium();
  let failed = 0;
  try {
    page = await openPage(browser, base.origin, problems);
    watchConsole(page, problems, () => step);
    let runs = 0;
    for (const run of await api('runs')) {
      const tools = await api('run_tools', { run });
      if (!tools.some((t) => TABLE_TOOLS.includes(t))) continue;
      runs++;
      try {
        results.push(`ok   ${run}: ${await checkRun(run, tools)}`);
      } catch (error) {
        failed++;
        results.push(`FAIL ${run} (${step}): ${error?.message ?? error}`);
        await page.screenshot({ path: join(ARTIFACTS, `chrome-failure-${shotName(run, 'x')}.png`), fullPage: true }).catch(() => {});
      }
    }
    if (runs === 0) {
      failed++;
      results.push('FAIL no Chrome-trace run found among the fixtures');
    }
  } finally {
    await browser.close();
  }
  report(results, failed, problems, `; screenshots in ${ARTIFACTS}`);
}

main().catch((error) => abort(error));
