// Browser test of "Compare with..." in real headless Chromium (playwright-core + /usr/bin/chromium).
//
//   PROFILE_E2E_URL=http://127.0.0.1:8791/ PROFILE_E2E_ARTIFACTS=/tmp/shots node e2e/compare.e2e.mjs
//
// Runs against the real server on the fixtures in tests/data (docs/compare.md). A user picks a
// baseline run in the header: the PyTorch operators of pytorch_diff_test against
// pytorch_diff_control show the server's summary and rows, sort by a delta column, and Export as
// CSV downloads the server's data_csv; the headers read "Device self — baseline" over values in readable units (raw us in the tooltip); the Scope
// select counts as torch-tb-profiler's diff (scope=main_thread_steps); a baseline of two hosts
// (pytorch_two_ranks) shows a "Baseline host" picker whose choice is the server's base_host; a
// deep link with base_run opens the overview comparison of two JAX runs; a tool that cannot be
// compared says so, naming those that can; picking "(none)" goes back to the tool. Screenshots
// of every step (1366x768) land in PROFILE_E2E_ARTIFACTS.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { check, parseCsv } from './browser.mjs';
import { e2eSuite } from './harness.mjs';

const suite = e2eSuite('compare', { timeoutMs: 120000 });
const { api, appUrl } = suite;
const TIMEOUT_MS = suite.timeoutMs;
const BASE_RUN = 'pytorch_diff_control/run/1';
const EXP_RUN = 'pytorch_diff_test/run/1';
const JAX = 'jax_cpu_train/session_1';
const JAX_REMOTE = 'jax_remote_capture/jax_server__xprof_client';
const RANKS = 'pytorch_two_ranks/run/1';

let page;

const text = async (locator) => (await locator.first().textContent()).replace(/\s+/g, ' ').trim();
// Where the check left the page (no scroll to the top, unlike suite.shot).
const shot = (name) => page.screenshot({ path: join(suite.artifacts, `compare-${name}.png`), fullPage: true });

async function ready() {
  const view = page.locator('pf-compare-view');
  await view.locator('.summary, pf-message').first().waitFor({ timeout: TIMEOUT_MS });
  return view;
}

async function pickBaseline() {
  await page.goto(appUrl({ run: EXP_RUN, tool: 'pytorch_operators' }));
  await page.locator('pf-tool-view > *:not(pf-skeleton)').first().waitFor({ timeout: TIMEOUT_MS });
  await page.locator('pf-select-field[label="Compare with"] select').selectOption(BASE_RUN);
  const view = await ready();
  check(new URL(page.url()).searchParams.get('base_run') === BASE_RUN, `the URL keeps no base_run: ${page.url()}`);
  const want = await api('data', { run: EXP_RUN, tag: 'pytorch_operators', base_run: BASE_RUN });
  const summary = await text(view.locator('.summary'));
  check(summary.includes(want.p.summary), `summary "${summary}" is not the server's "${want.p.summary}"`);
  const firstName = await text(view.locator('pf-data-table tbody tr').first().locator('td').first());
  const wantName = want.rows[0].c[0].v;
  check(wantName.startsWith(firstName.replace(/…$/, '')), `first row ${firstName}, the server's ${wantName}`);
  const status = await text(view.locator('pf-data-table tbody tr').first().locator('td').nth(1));
  check(status === want.rows[0].c[1].v, `status ${status} is not ${want.rows[0].c[1].v}`);
  await shot('pytorch-operators');
  return `${want.rows.length} rows; "${want.p.summary.slice(0, 60)}…"`;
}

/** A cell's raw value: its tooltip ("58,104 us") where the page shows a readable unit. */
async function rawValue(cell) {
  const raw = (await cell.getAttribute('title')) || (await text(cell));
  return Number(raw.replace(/[^0-9.-]/g, ''));
}

async function sortByDelta() {
  const view = page.locator('pf-compare-view');
  const header = view.locator('pf-data-table th', { hasText: 'Device self — Δ' }).first();
  await header.click(); // ascending: the largest decrease first
  const want = await api('data', { run: EXP_RUN, tag: 'pytorch_operators', base_run: BASE_RUN });
  const deltaIndex = want.cols.findIndex((c) => c.id === 'device_self_us_delta');
  const deltas = want.rows.map((r) => r.c[deltaIndex].v);
  const sorted = [...deltas].sort((a, b) => a - b);
  const firstCells = view.locator('pf-data-table tbody tr').first().locator('td');
  const shown = await rawValue(firstCells.nth(4));
  let order = 'ascending';
  if (Math.abs(shown - sorted[0]) > 1) {
    await header.click();
    order = 'descending';
    const again = await rawValue(view.locator('pf-data-table tbody tr').first().locator('td').nth(4));
    check(Math.abs(again - sorted[sorted.length - 1]) <= 1, `sorted by delta the first row shows ${again}, not ${sorted[0]} or ${sorted.at(-1)}`);
  }
  await shot('sorted-by-delta');
  return `sorted ${order} by device self time delta`;
}

async function readableHeaders() {
  const headers = (await page.locator('pf-compare-view pf-data-table th').allTextContents()).map((t) => t.replace(/\s+/g, ' ').trim());
  for (const want of ['Name', 'Status', 'Device self — baseline', 'Device self — experiment', 'Device self — Δ', 'Device self — Δ%']) {
    check(headers.some((h) => h.startsWith(want)), `no header "${want}" in ${JSON.stringify(headers)}`);
  }
  check(!headers.some((h) => /_base|_exp|_delta/.test(h)), `a raw id is a header: ${JSON.stringify(headers)}`);
  const experiment = page.locator('pf-compare-view pf-data-table tbody tr').first().locator('td').nth(3);
  const shown = await text(experiment);
  check(/^-?[\d.]+ (ns|µs|ms|s)$/.test(shown) && /\d us$/.test((await experiment.getAttribute('title')) ?? ''), `the experiment's time reads "${shown}", not a readable unit over the raw us`);
  return headers.slice(0, 6).join(' | ');
}

async function scopeSelect() {
  const view = page.locator('pf-compare-view');
  const select = view.locator('pf-select-field[label="Scope"] select');
  check((await select.inputValue()) === 'all', `the scope starts at ${await select.inputValue()}`);
  await select.selectOption('main_thread_steps');
  const want = await api('data', { run: EXP_RUN, tag: 'pytorch_operators', base_run: BASE_RUN, scope: 'main_thread_steps' });
  const summary = await shownSummary(view, want.p.summary);
  check(summary.includes(want.p.summary), `with the scope the summary "${summary}" is not the server's "${want.p.summary}"`);
  check(new URL(page.url()).searchParams.get('scope') === 'main_thread_steps', `the URL keeps no scope: ${page.url()}`);
  const href = new URL(await view.locator('pf-data-table a.export').getAttribute('href'), page.url());
  check(href.searchParams.get('scope') === 'main_thread_steps', `the CSV link has no scope: ${href}`);
  await shot('scope-main-thread-steps');
  await select.selectOption('all');
  await view.locator('.summary').first().waitFor({ timeout: TIMEOUT_MS });
  return `${want.rows.length} rows in the step thread's steps`;
}

async function baselineHostPicker() {
  await page.goto(appUrl({ run: EXP_RUN, tool: 'pytorch_kernels', base_run: RANKS }));
  const view = await ready();
  const picker = view.locator('pf-select-field[label="Baseline host"] select');
  await picker.waitFor({ timeout: TIMEOUT_MS });
  const options = await picker.locator('option').allTextContents();
  check(JSON.stringify(options) === JSON.stringify(['(all hosts)', 'rank0', 'rank1']), `the picker offers ${JSON.stringify(options)}`);
  check((await picker.inputValue()) === 'rank0', `the baseline host starts at "${await picker.inputValue()}"`);
  await shot('baseline-host-rank0');
  await picker.selectOption('rank1');
  const want = await api('data', { run: EXP_RUN, tag: 'pytorch_kernels', base_run: RANKS, base_host: 'rank1', host: await hostOfPage() });
  const summary = await shownSummary(view, want.p.summary);
  check(new URL(page.url()).searchParams.get('base_host') === 'rank1', `the URL keeps no base_host: ${page.url()}`);
  check(summary.includes(want.p.summary), `with rank1 the summary "${summary}" is not the server's "${want.p.summary}"`);
  const href = new URL(await view.locator('pf-data-table a.export').getAttribute('href'), page.url());
  check(href.searchParams.get('base_host') === 'rank1', `the CSV link compares ${href.searchParams.get('base_host')}`);
  await shot('baseline-host-rank1');
  return `(all hosts), rank0, rank1; rank1: "${want.p.summary.slice(0, 50)}…"`;
}

/** The summary (or message) the view shows once it says `want`, or after the timeout. */
async function shownSummary(view, want) {
  const deadline = Date.now() + TIMEOUT_MS;
  let shown = '';
  while (Date.now() < deadline) {
    const loc = view.locator('.summary, pf-message');
    shown = (await loc.count()) ? await text(loc) : '';
    if (shown.includes(want)) break;
    await page.waitForTimeout(200);
  }
  return shown;
}

async function hostOfPage() {
  const select = page.locator('pf-select-field[label="Host"] select');
  return (await select.count()) ? await select.inputValue() : undefined;
}

async function exportCsv() {
  const table = page.locator('pf-compare-view pf-data-table');
  const href = new URL(await table.locator('a.export').getAttribute('href'), page.url());
  check(href.searchParams.get('base_run') === BASE_RUN, `the CSV link has no base_run: ${href}`);
  const [download] = await Promise.all([page.waitForEvent('download', { timeout: TIMEOUT_MS }), table.locator('.export').click()]);
  const got = readFileSync(await download.path(), 'utf8');
  const want = await api('data_csv', { run: EXP_RUN, tag: 'pytorch_operators', base_run: BASE_RUN }, 'text');
  check(got === want, 'the downloaded CSV is not the server data_csv answer');
  return `${parseCsv(got).length - 1} rows, ${download.suggestedFilename()}`;
}

async function overviewDeepLink() {
  await page.goto(appUrl({ run: JAX_REMOTE, tool: 'overview_page', base_run: JAX }));
  const view = await ready();
  const summary = await text(view.locator('.summary'));
  check(/step time [\d,.]+ -> [\d,.]+ ms/.test(summary), `the overview summary says "${summary}"`);
  const select = page.locator('pf-select-field[label="Compare with"] select');
  check((await select.inputValue()) === JAX, `the baseline picker shows ${await select.inputValue()}`);
  await shot('overview');
  return summary.slice(0, 90);
}

async function tensorMemory() {
  const base = 'profiler_hook/train/timeline-4';
  const exp = 'profiler_hook/train/timeline-8';
  await page.goto(appUrl({ run: exp, tool: 'tensor_memory', base_run: base }));
  const view = await ready();
  const want = await api('data', { run: exp, tag: 'tensor_memory', base_run: base });
  const summary = await shownSummary(view, want.p.summary);
  check(summary.includes(want.p.summary), `the memory summary "${summary}" is not the server's "${want.p.summary}"`);
  const headers = (await view.locator('pf-data-table th').allTextContents()).map((t) => t.replace(/\s+/g, ' ').trim());
  check(headers.some((h) => h.startsWith('Peak of live tensors — baseline')), `memory headers ${JSON.stringify(headers)}`);
  const peak = await text(view.locator('pf-data-table tbody tr').first().locator('td').nth(3));
  check(/^[\d.]+ (B|KiB|MiB|GiB)$/.test(peak), `the experiment's peak reads "${peak}", not a readable size`);
  await shot('tensor-memory');
  return want.p.summary.slice(0, 80);
}

async function notComparable() {
  await page.goto(appUrl({ run: JAX, tool: 'graph_viewer', base_run: JAX_REMOTE }));
  const view = await ready();
  const message = view.locator('pf-message');
  await message.waitFor({ timeout: TIMEOUT_MS });
  const shown = (await message.evaluate((el) => el.shadowRoot.textContent)).replace(/\s+/g, ' ');
  check(shown.includes('cannot be compared') && shown.includes('hlo_stats'), `the message says "${shown}"`);
  await shot('not-comparable');
  return 'names the tools that can be compared';
}

async function backToTheTool() {
  await page.locator('pf-select-field[label="Compare with"] select').selectOption('');
  await page.locator('pf-tool-view > *:not(pf-skeleton)').first().waitFor({ timeout: TIMEOUT_MS });
  check((await page.locator('pf-compare-view').count()) === 0, 'the comparison stays after "(none)"');
  check(!new URL(page.url()).searchParams.has('base_run'), 'base_run stays in the URL');
  return 'the tool view again';
}

suite.run(
  (opened) => {
    page = opened;
    return [
      ['pick a baseline', pickBaseline],
      ['sort by delta', sortByDelta],
      ['Export as CSV', exportCsv],
      ['readable headers with units', readableHeaders],
      ['the Scope select', scopeSelect],
      ['the baseline host picker', baselineHostPicker],
      ['deep link to the overview comparison', overviewDeepLink],
      ['ProfilerHook memory peaks', tensorMemory],
      ['a tool that cannot be compared', notComparable],
      ['"(none)" goes back to the tool', backToTheTool],
    ];
  },
  {
    viewport: { width: 1366, height: 768 },
    // The page shows a refused comparison (400) itself; Chromium logs the status too.
    ignoreConsoleError: (message) => /status of 400/.test(message.text()) && /graph_viewer/.test(message.location()?.url ?? ''),
    reportSuffix: `; screenshots in ${suite.artifacts}`,
  },
);
