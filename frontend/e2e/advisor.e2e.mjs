// Browser test of the advisor, op-type, scope and code pages, and the live page's capture dialog,
// in real headless Chromium against the real server on tests/data.
//
//   PROFILE_E2E_URL=http://127.0.0.1:8791/ PROFILE_E2E_ARTIFACTS=/tmp/shots node e2e/advisor.e2e.mjs
//
// Numbers on the pages are compared with the tool data the server sends; Export as CSV with
// `data_csv`. Fails on any request to another origin, console error, page error or CSP violation.
// Screenshots land in PROFILE_E2E_ARTIFACTS (advisor-*.png).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { check } from './browser.mjs';
import { e2eSuite } from './harness.mjs';

const suite = e2eSuite('advisor');
const { api, appUrl, shot } = suite;
const TIMEOUT_MS = suite.timeoutMs;

const KERAS = 'tf_keras2_fit/session_1';
const JAX = 'jax_cpu_train/session_1';
const TWO_RANKS = 'pytorch_two_ranks/run/1';
const AMD = 'pytorch_amd_mi250/run/1';
const HOOK = 'profiler_hook/train/timeline-8';
let page;

async function open(run, tool, viewTag, host) {
  await page.goto(appUrl(host ? { run, tool, host } : { run, tool }));
  const view = page.locator(`pf-tool-view > ${viewTag}, pf-tool-view > pf-message`).first();
  await view.waitFor({ timeout: TIMEOUT_MS * 2 });
  const banner = page.locator('pf-tool-view > pf-message[kind="error"]');
  if (await banner.count()) throw new Error('error banner on ' + tool);
  return page.locator(`pf-tool-view > ${viewTag}`);
}

const clean = (s) => s.replace(/\s+/g, ' ').trim();
const column = (table, id) => table.cols.findIndex((c) => c.id === id);

async function advisorPage() {
  const data = await api('data', { run: KERAS, tag: 'advisor' });
  const view = await open(KERAS, 'advisor', 'pf-advisor-view');
  const cards = view.locator('article.finding');
  await cards.first().waitFor({ timeout: TIMEOUT_MS });
  check((await cards.count()) === data.rows.length, `${await cards.count()} cards for ${data.rows.length} findings`);
  const first = cards.first();
  check((await first.getAttribute('data-check')) === 'input_bound', 'the first finding is not input_bound');
  check((await first.getAttribute('class')).includes('critical'), 'input_bound is not shown as critical');
  const title = data.rows[0].c[column(data, 'title')].v;
  check(clean(await first.textContent()).includes(title), 'card does not show the finding title');
  check((await view.locator('[data-check="tf_data_bottleneck"]').count()) === 1, 'no tf.data bottleneck card');
  await shot('keras');
  await first.locator('a.tool-link').click();
  await page.locator('pf-tool-view > pf-input-pipeline-view, pf-tool-view > pf-message').first().waitFor({ timeout: TIMEOUT_MS * 2 });
  check(new URL(page.url()).searchParams.get('tool') === 'input_pipeline_analyzer', `link went to ${page.url()}`);
  return `${data.rows.length} findings, evidence link opens the input pipeline analyzer`;
}

async function jaxAdvisor() {
  const view = await open(JAX, 'advisor', 'pf-advisor-view');
  await view.locator('article.finding').first().waitFor({ timeout: TIMEOUT_MS });
  const all = clean(await view.evaluate((el) => el.shadowRoot.textContent));
  check(all.includes('JAX profile'), 'framework not named');
  check(!/tf\.data|TF2|tf\.function/.test(all), 'TensorFlow advice on a JAX run');
  await shot('jax');
  return 'JAX advice only';
}

/** Waits for a tree table's rows and checks that its first (root) row shows the data's total. */
async function rootTotalShown(view, data) {
  const rows = view.locator('tbody tr');
  await rows.first().waitFor({ timeout: TIMEOUT_MS });
  const rootMs = data.rows[0].c[column(data, 'total_time_us')].v / 1000;
  const shown = Number(clean(await rows.first().locator('td').nth(1).textContent()));
  check(Math.abs(shown - rootMs) < 0.001, `root total ${shown} ms, data ${rootMs} ms`);
  return rows;
}

async function opTypesPage() {
  const data = await api('data', { run: KERAS, tag: 'op_types' });
  const view = await open(KERAS, 'op_types', 'pf-tree-table-view');
  const rows = await rootTotalShown(view, data);
  const types = await view.locator('tbody tr[data-kind="type"]').count();
  const expected = data.rows.filter((r) => r.c[column(data, 'kind')].v === 'type').length;
  check(types === expected, `${types} type rows, data has ${expected}`);
  const before = await rows.count();
  await view.locator('tbody tr[data-kind="type"] button.toggle').first().click();
  check((await rows.count()) > before, 'expanding a type showed no ops');
  const [download] = await Promise.all([page.waitForEvent('download', { timeout: TIMEOUT_MS }), view.locator('a.export').click()]);
  const file = readFileSync(await download.path(), 'utf8');
  check(file === (await api('data_csv', { run: KERAS, tag: 'op_types' }, 'text')), 'CSV differs from data_csv');
  await shot('op-types');
  return `${types} op types, drill-down and CSV`;
}

async function scopePage() {
  const view = await open(KERAS, 'scope_view', 'pf-tree-table-view');
  await view.locator('tbody tr').first().waitFor({ timeout: TIMEOUT_MS });
  await view.locator('input[type="search"]').fill('conv2d_1');
  await page.waitForTimeout(200);
  const names = await view.locator('tbody td.name').allTextContents();
  check(names.some((n) => n.includes('conv2d_1')), 'filter hid the matching scope');
  check(names.some((n) => n.includes('Conv2DBackpropFilter')), "filter hid the matching scope's ops");
  await shot('scope');
  return `filter shows ${names.length} rows`;
}

async function codePage() {
  const view = await open(JAX, 'code_view', 'pf-tree-table-view');
  await view.locator('tbody tr').first().waitFor({ timeout: TIMEOUT_MS });
  await view.locator('button', { hasText: 'Expand all' }).click();
  const frames = await view.locator('tbody tr[data-kind="frame"] td.name').allTextContents();
  check(frames.some((f) => f.includes('train_step')), 'no train_step frame');
  await shot('code');
  return `${frames.length} frame rows`;
}

async function overviewUsesAdvisor() {
  await open(KERAS, 'overview_page', 'pf-overview-view');
  const card = page.locator('pf-overview-view .recommendation article.finding').first();
  await card.waitFor({ timeout: TIMEOUT_MS });
  check((await card.getAttribute('data-check')) === 'input_bound', 'overview does not show the input-bound finding');
  await shot('overview-keras');
  await open(JAX, 'overview_page', 'pf-overview-view');
  await page.locator('pf-overview-view .recommendation article.finding').first().waitFor({ timeout: TIMEOUT_MS });
  const text = clean(await page.locator('pf-overview-view .recommendation').textContent());
  check(!text.includes('TF2 Profiler FAQ'), 'JAX overview still refers to the TF2 FAQ');
  await shot('overview-jax');
  return 'advisor findings in the recommendation';
}

async function pytorchAdvisor() {
  const data = await api('data', { run: TWO_RANKS, tag: 'advisor', host: 'ALL_HOSTS' });
  const view = await open(TWO_RANKS, 'advisor', 'pf-advisor-view', 'ALL_HOSTS');
  const first = view.locator('article.finding').first();
  await first.waitFor({ timeout: TIMEOUT_MS });
  check((await first.getAttribute('data-check')) === 'device_utilization', 'GPU idle time is not the first finding');
  const evidence = data.rows[0].c[column(data, 'evidence')].v;
  check(clean(await first.textContent()).includes(evidence), 'card does not show the GPU idle evidence');
  const all = clean(await view.evaluate((el) => el.shadowRoot.textContent));
  check(all.includes('PyTorch profile'), 'framework not named');
  check(!/tf\.data|TF2|tf\.function|jax\./.test(all), 'TensorFlow or JAX advice on a PyTorch run');
  await shot('pytorch');
  await first.locator('a.tool-link').click();
  await page.locator('pf-tool-view > pf-pytorch-overview-view').first().waitFor({ timeout: TIMEOUT_MS * 2 });
  return `${data.rows.length} findings, GPU idle time first, link opens the PyTorch overview`;
}

async function pytorchOverviewRecommends() {
  await open(AMD, 'pytorch_overview', 'pf-pytorch-overview-view');
  const card = page.locator('pf-pytorch-overview-view .recommendation article.finding').first();
  await card.waitFor({ timeout: TIMEOUT_MS });
  check((await card.getAttribute('data-check')) === 'device_utilization', 'no GPU idle finding in the recommendation');
  check((await card.getAttribute('class')).includes('critical'), 'a GPU busy 1% of the steps is not critical');
  await shot('pytorch-overview');
  return 'GPU idle time in the performance recommendation';
}

async function pytorchTrees() {
  const data = await api('data', { run: TWO_RANKS, tag: 'op_types', host: 'rank0' });
  await rootTotalShown(await open(TWO_RANKS, 'op_types', 'pf-tree-table-view', 'rank0'), data);
  await shot('pytorch-op-types');
  const scopes = await open(AMD, 'scope_view', 'pf-tree-table-view');
  await scopes.locator('tbody tr').first().waitFor({ timeout: TIMEOUT_MS });
  await scopes.locator('input[type="search"]').fill('addmm');
  await page.waitForTimeout(200);
  const names = await scopes.locator('tbody td.name').allTextContents();
  check(names.some((n) => n.includes('aten::linear')), "filter hid aten::addmm's enclosing aten::linear");
  await shot('pytorch-scope');
  const hook = await open(HOOK, 'scope_view', 'pf-tree-table-view');
  await hook.locator('tbody tr').first().waitFor({ timeout: TIMEOUT_MS });
  await hook.locator('button', { hasText: 'Expand all' }).click();
  const hookNames = await hook.locator('tbody td.name').allTextContents();
  check(hookNames.some((n) => n.includes('Conv2DBackpropFilter')), 'ProfilerHook node names are not scopes');
  await shot('profiler-hook-scope');
  return `PyTorch op types (${data.rows.length} rows), PyTorch and ProfilerHook scopes`;
}

async function livePrefill() {
  // A page served by live.serve gets `live` in /config; play that server's answer here.
  await page.route('**/config*', async (route) => {
    const response = await route.fetch();
    const body = await response.json();
    await route.fulfill({ response, json: { ...body, live: { service_addr: 'this-process', framework: 'JAX', pid: 4242 } } });
  });
  // That server also lists the steps its script marked (none here).
  await page.route('**/live_steps*', (route) =>
    route.fulfill({ json: { steps: [], total: 0, capture: { state: 'idle' } } }),
  );
  await open(JAX, 'advisor', 'pf-advisor-view');
  const badge = page.locator('pf-app .live');
  await badge.waitFor({ timeout: TIMEOUT_MS });
  check(clean(await badge.textContent()) === 'Live: JAX process 4242', 'no live badge');
  await page.locator('pf-app header button.primary').click();
  const input = page.locator('pf-capture-dialog input[name="serviceAddr"]');
  await input.waitFor({ timeout: TIMEOUT_MS });
  for (let i = 0; i < 50 && (await input.inputValue()) !== 'this-process'; i++) await page.waitForTimeout(100);
  check((await input.inputValue()) === 'this-process', `dialog not pre-filled: ${await input.inputValue()}`);
  await page.screenshot({ path: join(suite.artifacts, 'advisor-live-dialog.png') });
  await page.unroute('**/config*');
  return 'capture dialog pre-filled with this process';
}

suite.run(
  (opened) => {
    page = opened;
    return [
      ['advisor', advisorPage],
      ['advisor on JAX', jaxAdvisor],
      ['op types', opTypesPage],
      ['scope view', scopePage],
      ['code view', codePage],
      ['overview', overviewUsesAdvisor],
      ['advisor on PyTorch', pytorchAdvisor],
      ['PyTorch overview', pytorchOverviewRecommends],
      ['PyTorch and ProfilerHook trees', pytorchTrees],
      ['live capture dialog', livePrefill],
    ];
  },
  { ignoreConsoleError: () => false }, // every console error counts, a 404 included
);
