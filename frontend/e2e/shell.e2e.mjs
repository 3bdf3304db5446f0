// Browser test of the app shell in real headless Chromium (playwright-core + /usr/bin/chromium).
//
//   PROFILE_E2E_URL=http://127.0.0.1:8791/ PROFILE_E2E_ARTIFACTS=/tmp/shots npm run e2e
//
// PROFILE_E2E_URL is the server root (the standalone server serves the app at / and every route
// and file under /data/plugin/profile/ too). The server must have at least one run with a table
// tool (framework_op_stats, hlo_stats, ...). The page runs under a strict CSP (added to the HTML
// response when the server sends none). Checks: selectors fill from the routes; picking
// run/tool/host loads a table; sorting and filtering change the rows; Export as CSV downloads a
// file whose header matches the column labels; back/forward and deep-link reload keep the
// selection; no request leaves the server's origin; no console errors or CSP violations.
// Exit code 0 on success, 1 with a message on the first failure; screenshots are saved.
import { mkdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { enforceStrictCsp, guardOrigin, launchChromium, parseCsvLine } from './browser.mjs';

const BASE = process.env.PROFILE_E2E_URL;
const ARTIFACTS = process.env.PROFILE_E2E_ARTIFACTS || join(tmpdir(), 'profile-e2e-artifacts');
const TABLE_TOOLS = ['framework_op_stats', 'hlo_stats', 'kernel_stats', 'roofline_model', 'input_pipeline_analyzer', 'overview_page'];
const TIMEOUT_MS = Number(process.env.PROFILE_E2E_TIMEOUT_MS || 60000);

if (!BASE) fail('Set PROFILE_E2E_URL to the server root, e.g. http://127.0.0.1:8791/');
const base = new URL(BASE);
const pluginBase = new URL('data/plugin/profile/', base);
mkdirSync(ARTIFACTS, { recursive: true });

const problems = [];
let page;
let step = 'start';

function fail(message) {
  console.error('0 passed, 1 failed');
  console.error(`e2e FAILED${step ? ` at "${step}"` : ''}: ${message}`);
  process.exit(1);
}

function check(condition, message) {
  if (!condition) throw new Error(message);
}

async function shot(name) {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

async function getJson(route) {
  const response = await fetch(new URL(route, pluginBase));
  check(response.ok, `GET ${route} answered ${response.status}`);
  return response.json();
}

async function hostsOf(run, tool) {
  return (await getJson(`hosts?run=${encodeURIComponent(run)}&tag=${encodeURIComponent(tool)}`)).map((h) => h.hostname ?? h);
}

/**
 * A run + table tool + host whose data has at least two rows, found through the API. When the
 * server has no such tool, the first run/tool/host with `table: false` (table checks are skipped
 * unless PROFILE_E2E_REQUIRE_TABLE=1).
 */
async function pickTarget() {
  const runs = await getJson('runs');
  check(Array.isArray(runs) && runs.length > 0, 'the server lists no runs');
  let fallback = null;
  for (const run of runs) {
    const tools = await getJson(`run_tools?run=${encodeURIComponent(run)}`);
    if (!fallback && tools.length) {
      const hosts = await hostsOf(run, tools[0]);
      fallback = { runs, run, tool: tools[0], hosts, host: hosts[0] ?? '', tools, table: false };
    }
    for (const tool of TABLE_TOOLS.filter((t) => tools.includes(t))) {
      const hosts = await hostsOf(run, tool);
      const host = hosts[0] ?? '';
      const q = new URLSearchParams({ run, tag: tool, ...(host ? { host } : {}) });
      const response = await fetch(new URL(`data?${q}`, pluginBase));
      if (!response.ok) continue;
      const data = await response.json();
      const first = Array.isArray(data) ? data[0] : data;
      if (first?.cols?.length && first.rows?.length >= 2) return { runs, run, tool, hosts, host, tools, table: true };
    }
  }
  check(fallback, 'no run has any tool');
  check(!process.env.PROFILE_E2E_REQUIRE_TABLE, 'no run has a table tool with at least two rows');
  console.log('note: no run has a table tool with rows; table checks (sort, filter, CSV) are skipped');
  return fallback;
}

const select = (label) => page.locator(`pf-select-field[label="${label}"] select`);
const table = () => page.locator('pf-data-table').first();

async function selected(label) {
  return select(label).evaluate((el) => el.value);
}

/** The raw values of a column: a cell's tooltip when it shows the value in another unit, else its text. */
async function columnRawValues(index) {
  return table().locator('tbody tr').evaluateAll(
    (rows, i) => rows.map((row) => {
      const td = row.querySelectorAll('td')[i];
      return (td?.classList.contains('number') && td.title) || (td?.textContent ?? '');
    }),
    index,
  );
}

async function columnTexts(index) {
  return table().locator('tbody tr').evaluateAll(
    (rows, i) => rows.map((row) => row.querySelectorAll('td')[i]?.textContent ?? ''),
    index,
  );
}

async function headerLabels() {
  return table().locator('thead th button').evaluateAll((buttons) =>
    buttons.map((b) => b.textContent.replace(/[▲▼]/g, '').trim()),
  );
}

async function waitForTable() {
  await table().locator('tbody tr').first().waitFor({ timeout: TIMEOUT_MS });
}

/** Waits until the tool view shows something other than its loading skeleton. */
async function waitForView() {
  await page
    .locator('pf-tool-view > *:not(pf-skeleton)')
    .first()
    .waitFor({ timeout: TIMEOUT_MS * 2 });
}

/** Fails with the banner's text when the tool view shows an error. */
async function checkNoErrorBanner() {
  const banner = page.locator('pf-tool-view pf-message[kind="error"]');
  if (await banner.count()) {
    const text = await banner.first().evaluate((el) => el.shadowRoot.textContent.replace(/\s+/g, ' ').trim());
    throw new Error(`the tool view shows an error: ${text}`);
  }
}

async function waitForContent() {
  await waitForView();
  await checkNoErrorBanner();
  if (target.table) await waitForTable();
}
let target;

async function waitForSelection(run, tool, host) {
  await page.waitForFunction(
    ([r, t, h]) => {
      const q = new URLSearchParams(location.search);
      return q.get('run') === r && q.get('tool') === t && (q.get('host') ?? '') === h;
    },
    [run, tool, host],
    { timeout: TIMEOUT_MS },
  );
}

async function tableChecks() {
  step = 'sort by a column';
  const labels = await headerLabels();
  const numericIndex = await table().locator('thead th').evaluateAll((ths) => ths.findIndex((th) => th.classList.contains('number')));
  const sortIndex = numericIndex >= 0 ? numericIndex : 0;
  const header = table().locator('thead th button').nth(sortIndex);
  await header.click();
  const asc = await columnTexts(sortIndex);
  const ascRaw = await columnRawValues(sortIndex);
  await header.click();
  const desc = await columnTexts(sortIndex);
  const descRaw = await columnRawValues(sortIndex);
  check((await table().locator('thead th').nth(sortIndex).getAttribute('aria-sort')) === 'descending', 'aria-sort is not descending after two clicks');
  if (numericIndex >= 0) {
    // A column with a unit shows e.g. "1.15 s"; its raw value is the cell's tooltip ("1149007.737 us").
    const nums = (values) => values.filter((t) => t !== '—').map((t) => Number(t.split(' ')[0]));
    const ascNums = nums(ascRaw);
    const descNums = nums(descRaw);
    check(ascNums.every((v, i) => i === 0 || ascNums[i - 1] <= v), `column "${labels[sortIndex]}" is not ascending: ${ascNums.slice(0, 10)}`);
    check(descNums.every((v, i) => i === 0 || descNums[i - 1] >= v), `column "${labels[sortIndex]}" is not descending: ${descNums.slice(0, 10)}`);
  }
  check(JSON.stringify(asc) !== JSON.stringify(desc) || new Set(asc).size === 1, 'sorting did not change the row order');
  await shot('03-sorted');

  step = 'filter rows';
  const countBefore = await table().locator('.count').textContent();
  const filter = table().locator('input[type="search"]');
  // A term from a text column that some visible row lacks, so filtering must drop rows.
  const stringIndices = await table().locator('thead th').evaluateAll((ths) =>
    ths.map((th, i) => (th.classList.contains('number') ? -1 : i)).filter((i) => i >= 0),
  );
  let term;
  for (const index of stringIndices.length ? stringIndices : [0]) {
    const texts = (await columnTexts(index)).filter((t) => t && t !== '—');
    term = texts.find((t) => texts.some((u) => !u.toLowerCase().includes(t.toLowerCase())));
    if (term) break;
    term ??= texts[0];
  }
  await filter.fill('zz_no_such_text_zz');
  check((await table().locator('tbody tr').count()) === 0, 'a filter matching nothing still shows rows');
  await filter.fill(term);
  const filtered = await table().locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.textContent.toLowerCase()));
  check(filtered.length > 0 && filtered.every((r) => r.includes(term.toLowerCase())), `filter "${term}" shows non-matching rows`);
  const countAfter = await table().locator('.count').textContent();
  check(countAfter !== countBefore, `row count did not change with filter "${term}" (${countAfter})`);
  await shot('04-filtered');
  await filter.fill('');

  step = 'export as CSV';
  const exportLink = table().locator('a.export');
  check((await exportLink.count()) === 1, 'no Export as CSV link on the first table');
  const href = new URL(await exportLink.getAttribute('href'), page.url());
  check(href.pathname.endsWith('/data_csv') && href.searchParams.get('run') === target.run && href.searchParams.get('tag') === target.tool,
    `CSV link does not point at data_csv for the selection: ${href}`);
  const [download] = await Promise.all([page.waitForEvent('download', { timeout: TIMEOUT_MS }), exportLink.click()]);
  const csvPath = await download.path();
  const csvHeader = parseCsvLine(readFileSync(csvPath, 'utf8').split('\n')[0].replace(/\r$/, ''));
  // The CSV has every column under its full label (a shown header may be shorter, with the full
  // label as its tooltip, and the Columns menu may hide some).
  const fullLabels = await table().locator('thead th button').evaluateAll((buttons) => buttons.map((b) => b.title));
  let at = 0;
  for (const label of fullLabels) {
    at = csvHeader.indexOf(label, at) + 1;
    if (at === 0) break;
  }
  check(at > 0 || fullLabels.length === 0, `CSV header ${JSON.stringify(csvHeader)} lacks the table's columns ${JSON.stringify(fullLabels)} in order`);
  if (!(await table().locator('details.columns').count())) {
    check(JSON.stringify(csvHeader) === JSON.stringify(fullLabels), `CSV header ${JSON.stringify(csvHeader)} differs from the table labels ${JSON.stringify(fullLabels)}`);
  }
  console.log(`csv: ${download.suggestedFilename()} header matches ${labels.length} columns`);

}

async function run() {
  step = 'discover data through the API';
  target = await pickTarget();
  console.log(`target: run=${target.run} tool=${target.tool} host=${target.host || '(none)'}`);

  const browser = await launchChromium();
  try {
    const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1280, height: 900 } });
    await enforceStrictCsp(context, base.origin);
    page = await context.newPage();
    guardOrigin(page, base.origin, problems);
    page.on('console', (message) => {
      if (message.type() !== 'error') return;
      // Chromium logs every 4xx of a fetch; a tool answering 404 NOT_APPLICABLE is shown by the page.
      const from = message.location()?.url ?? '';
      if (/^Failed to load resource.*status of 404/.test(message.text()) && /\/data\?/.test(from)) return;
      problems.push(`console error: ${message.text()} ${from}`);
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('dialog', (dialog) => {
      problems.push(`unexpected dialog: ${dialog.message()}`);
      void dialog.dismiss();
    });

    step = 'load the app at the server root';
    await page.goto(base.href);
    await page.locator('pf-select-field[label="Run"] option').first().waitFor({ state: 'attached', timeout: TIMEOUT_MS });
    await page.waitForFunction(() => new URLSearchParams(location.search).has('tool'), null, { timeout: TIMEOUT_MS });
    const runOptions = await select('Run').locator('option').evaluateAll((o) => o.map((x) => x.value));
    check(JSON.stringify(runOptions) === JSON.stringify(target.runs), `run options ${runOptions} differ from /runs ${target.runs}`);
    check((await selected('Run')) === target.runs[0], 'the first run is not selected by default');
    await shot('01-default');

    step = 'choose run, tool and host';
    await select('Run').selectOption(target.run);
    await page.waitForFunction((r) => new URLSearchParams(location.search).get('run') === r, target.run);
    await page.waitForFunction(() => !document.querySelector('pf-app').shadowRoot.querySelector('pf-skeleton'), null, { timeout: TIMEOUT_MS }).catch(() => {});
    const toolOptions = await select('Tool').locator('option').evaluateAll((o) => o.map((x) => x.value));
    check(JSON.stringify(toolOptions) === JSON.stringify(target.tools), `tool options ${toolOptions} differ from /run_tools`);
    await select('Tool').selectOption(target.tool);
    if (target.host) {
      await page.waitForFunction((t) => new URLSearchParams(location.search).get('tool') === t, target.tool);
      await select('Host').locator(`option[value="${target.host}"]`).waitFor({ state: 'attached' });
      await select('Host').selectOption(target.host);
    }
    await waitForSelection(target.run, target.tool, target.host);
    await waitForContent();
    await shot('02-selected');
    if (target.table) await tableChecks();

    step = 'deep link reload keeps the selection';
    await page.reload();
    await waitForContent();
    check((await selected('Run')) === target.run && (await selected('Tool')) === target.tool, 'reload lost the run/tool selection');
    if (target.host) check((await selected('Host')) === target.host, 'reload lost the host selection');

    step = 'deep link under the plugin path';
    const deep = new URL('index.html', pluginBase);
    deep.search = new URLSearchParams({ run: target.run, tool: target.tool, ...(target.host ? { host: target.host } : {}), unknown: 'x' }).toString();
    await page.goto(deep.href);
    await waitForContent();
    check((await selected('Tool')) === target.tool, 'deep link under /data/plugin/profile/ did not select the tool');
    await shot('05-deep-link');
    check((await page.locator('pf-app pf-message.notice').count()) === 0, 'a valid deep link shows a "not found" notice');

    step = 'a link to an unknown run says so';
    await page.goto(new URL(`?${new URLSearchParams({ run: 'no_such_run/session_0', tool: target.tool })}`, base).href);
    await waitForContent();
    const notice = page.locator('pf-app pf-message.notice');
    await notice.waitFor({ timeout: TIMEOUT_MS });
    const noticeText = (await notice.evaluate((el) => el.shadowRoot.textContent)).replace(/\s+/g, ' ');
    const shownRun = await selected('Run');
    check(noticeText.includes('no_such_run/session_0') && noticeText.includes(shownRun), `unknown run notice: "${noticeText}"`);

    step = 'back and forward';
    const otherTool = target.tools.find((t) => t !== target.tool);
    if (otherTool) {
      await select('Tool').selectOption(otherTool);
      await page.waitForFunction((t) => new URLSearchParams(location.search).get('tool') === t, otherTool);
      await page.goBack();
      await page.waitForFunction((t) => new URLSearchParams(location.search).get('tool') === t, target.tool);
      await page.waitForFunction((t) => document.querySelector('pf-app').shadowRoot.querySelector('pf-select-field[label="Tool"]').value === t, target.tool);
      await waitForContent();
    }

    step = 'capture dialog opens and closes with the keyboard';
    const captureButton = page.locator('pf-app header button.primary');
    if (await captureButton.count()) {
      await captureButton.click();
      const dialog = page.locator('pf-capture-dialog dialog');
      await dialog.waitFor({ state: 'visible' });
      check((await page.locator('pf-capture-dialog #duration').inputValue()).length > 0, 'capture dialog has no duration');
      await shot('06-capture-dialog');
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'hidden' });
    }

    step = 'trace viewer summary';
    const traceTool = target.tools.find((t) => t === 'trace_viewer@' || t === 'trace_viewer');
    if (traceTool) {
      await select('Tool').selectOption(traceTool);
      await page.waitForFunction((t) => new URLSearchParams(location.search).get('tool') === t, traceTool);
      await waitForView();
      await checkNoErrorBanner();
      const summaryTab = page.locator('pf-trace-view [role="tab"]', { hasText: 'Summary' });
      if (await summaryTab.count()) await summaryTab.click();
      const stats = page.locator('pf-trace-summary-view ul.stats');
      await stats.waitFor({ timeout: TIMEOUT_MS * 2 });
      check(/\d+ processes/.test((await stats.textContent()).replace(/\s+/g, ' ')), 'trace summary shows no process count');
      const rawLink = page.locator('pf-trace-summary-view a', { hasText: 'Open raw JSON' });
      check(new URL(await rawLink.getAttribute('href'), page.url()).pathname.endsWith('/data'), 'Open raw JSON does not link to data');
      await page.locator('pf-bar-chart canvas').first().waitFor({ timeout: TIMEOUT_MS }).catch(() => {});
      await shot('07-trace-summary');
    }

    step = 'dark theme renders';
    await page.emulateMedia({ colorScheme: 'dark' });
    await shot('08-dark');

    step = 'page health';
    check(problems.length === 0, problems.join('\n'));
  } finally {
    await browser.close();
  }
}

run()
  .then(() => {
    console.log(`e2e passed (screenshots in ${ARTIFACTS})`);
    console.log('1 passed, 0 failed');
  })
  .catch(async (error) => {
    try {
      if (page) await shot('failure');
    } catch {
      // the page may be gone
    }
    fail(error?.message ?? String(error));
  });
