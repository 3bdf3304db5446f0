// Browser test of "Compare with..." in real headless Chromium (playwright-core + /usr/bin/chromium).
//
//   PROFILE_E2E_URL=http://127.0.0.1:8791/ PROFILE_E2E_ARTIFACTS=/tmp/shots node e2e/compare.e2e.mjs
//
// Runs against the real server on the fixtures in tests/data (docs/compare.md). A user picks a
// baseline run in the header: the PyTorch operators of pytorch_diff_test against
// pytorch_diff_control show the server's summary and rows, sort by a delta column, and Export as
// CSV downloads the server's data_csv; a deep link with base_run opens the overview comparison of
// two JAX runs; a tool that cannot be compared says so, naming those that can; picking "(none)"
// goes back to the tool. Screenshots of every step land in PROFILE_E2E_ARTIFACTS.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { abort, apiClient, check, e2eTarget, launchChromium, openPage, parseCsv, query, report } from './browser.mjs';

const TIMEOUT_MS = Number(process.env.PROFILE_E2E_TIMEOUT_MS || 120000);
const BASE_RUN = 'pytorch_diff_control/run/1';
const EXP_RUN = 'pytorch_diff_test/run/1';
const JAX = 'jax_cpu_train/session_1';
const JAX_REMOTE = 'jax_remote_capture/jax_server__xprof_client';

const { base, pluginBase, artifacts: ARTIFACTS } = e2eTarget();
const api = apiClient(pluginBase);
const problems = [];
const results = [];
let page;
let step = 'start';

const text = async (locator) => (await locator.first().textContent()).replace(/\s+/g, ' ').trim();
const shot = (name) => page.screenshot({ path: join(ARTIFACTS, `compare-${name}.png`), fullPage: true });
const appUrl = (params) => new URL(`?${query(params)}`, base).href;

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

async function sortByDelta() {
  const view = page.locator('pf-compare-view');
  const header = view.locator('pf-data-table th', { hasText: 'device self us Δ' }).first();
  await header.click(); // ascending: the largest decrease first
  const want = await api('data', { run: EXP_RUN, tag: 'pytorch_operators', base_run: BASE_RUN });
  const deltaIndex = want.cols.findIndex((c) => c.id === 'device_self_us_delta');
  const deltas = want.rows.map((r) => r.c[deltaIndex].v);
  const sorted = [...deltas].sort((a, b) => a - b);
  const firstCells = view.locator('pf-data-table tbody tr').first().locator('td');
  const shown = Number((await text(firstCells.nth(4))).replace(/[^0-9.-]/g, ''));
  let order = 'ascending';
  if (Math.abs(shown - sorted[0]) > 1) {
    await header.click();
    order = 'descending';
    const again = Number((await text(view.locator('pf-data-table tbody tr').first().locator('td').nth(4))).replace(/[^0-9.-]/g, ''));
    check(Math.abs(again - sorted[sorted.length - 1]) <= 1, `sorted by delta the first row shows ${again}, not ${sorted[0]} or ${sorted.at(-1)}`);
  }
  await shot('sorted-by-delta');
  return `sorted ${order} by device self time delta`;
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

async function main() {
  const browser = await launchChromium();
  let failed = 0;
  try {
    page = await openPage(browser, base.origin, problems, { viewport: { width: 1400, height: 900 } });
    page.on('console', (message) => {
      if (message.type() !== 'error') return;
      // The page shows a refused comparison (400) itself; Chromium logs the status too.
      if (/status of 400/.test(message.text()) && /graph_viewer/.test(message.location()?.url ?? '')) return;
      problems.push(`console error in "${step}": ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`page error in "${step}": ${error.message}`));
    const checks = [
      ['pick a baseline', pickBaseline],
      ['sort by delta', sortByDelta],
      ['Export as CSV', exportCsv],
      ['deep link to the overview comparison', overviewDeepLink],
      ['a tool that cannot be compared', notComparable],
      ['"(none)" goes back to the tool', backToTheTool],
    ];
    for (const [name, fn] of checks) {
      step = name;
      try {
        results.push(`ok   ${name}: ${await fn()}`);
      } catch (error) {
        failed++;
        results.push(`FAIL ${name}: ${error?.message ?? error}`);
        await shot(`failure-${name.replace(/\W+/g, '-')}`).catch(() => {});
      }
    }
    step = 'page health';
  } finally {
    await browser.close();
  }
  report(results, failed, problems, `; screenshots in ${ARTIFACTS}`);
}

main().catch((error) => abort(error, step));
