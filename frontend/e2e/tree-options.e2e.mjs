// Browser test of tfprof's options on the tree views (op_types, scope_view, code_view), in real
// headless Chromium against the real server on tests/data.
//
//   PROFILE_E2E_URL=http://127.0.0.1:8791/ PROFILE_E2E_ARTIFACTS=/tmp/shots node e2e/tree-options.e2e.mjs
//
// Each option is set in the form (or by a header click) as a user would; the rows the page then
// shows are compared with the server's answer to the same parameters. A refused pattern must show
// the server's message and keep the tree. Screenshots: tree-options-*.png.
import { readFileSync } from 'node:fs';
import { check } from './browser.mjs';
import { e2eSuite } from './harness.mjs';

const suite = e2eSuite('tree-options');
const { api, appUrl, shot } = suite;
const TIMEOUT_MS = suite.timeoutMs;
const JAX = 'jax_cpu_train/session_1';
const KERAS = 'tf_keras2_fit/session_1';
let page;
let expect400 = false;

const column = (table, id) => table.cols.findIndex((c) => c.id === id);
const names = (table) => table.rows.map((r) => r.c[column(table, 'name')].v);

async function open(run, tool) {
  await page.goto(appUrl({ run, tool }));
  const view = page.locator('pf-tool-view > pf-tree-table-view');
  await view.locator('tbody tr').first().waitFor({ timeout: TIMEOUT_MS * 2 });
  return view;
}

/** The names on the page once every node is open, in page order. */
async function shownNames(view) {
  await view.locator('button', { hasText: 'Expand all' }).click();
  return view.locator('tbody td.name').evaluateAll((tds) =>
    tds.map((td) => [...td.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.textContent).join('').trim()),
  );
}

async function waitForApplied(view) {
  await page.waitForTimeout(100);
  await view.locator('[role="status"]').waitFor({ state: 'detached', timeout: TIMEOUT_MS });
}

async function depthAndOrder() {
  const view = await open(JAX, 'scope_view');
  await view.locator('details.options summary').click();
  const form = view.locator('pf-tree-options-form');
  await form.locator('select[name="orderBy"]').selectOption('name');
  await form.locator('input[name="maxDepth"]').fill('2');
  await shot('form');
  await form.locator('button[type="submit"]').click();
  await waitForApplied(view);
  const data = await api('data', { run: JAX, tag: 'scope_view', order_by: 'name', max_depth: '2' });
  const shown = await shownNames(view);
  check(JSON.stringify(shown) === JSON.stringify(names(data)), `rows ${shown.slice(0, 5)} differ from the data ${names(data).slice(0, 5)}`);
  const depths = data.rows.map((r) => r.c[column(data, 'depth')].v);
  check(Math.max(...depths) === 2, `max depth ${Math.max(...depths)}`);
  check((await view.locator('th[data-column="name"][aria-sort="ascending"]').count()) === 1, 'Name header not marked as the order');
  await shot('depth-and-name-order');
  return `${shown.length} rows at most 2 levels deep, A to Z`;
}

async function headerClickSorts() {
  const view = await open(KERAS, 'op_types');
  await view.locator('th[data-column="occurrences"] button').click();
  await waitForApplied(view);
  const data = await api('data', { run: KERAS, tag: 'op_types', order_by: 'occurrences' });
  const types = data.rows.filter((r) => r.c[column(data, 'kind')].v === 'type').map((r) => r.c[column(data, 'occurrences')].v);
  check(types.every((v, i) => i === 0 || types[i - 1] >= v), 'server did not order types by occurrences');
  const shownTypes = await view.locator('tbody tr[data-kind="type"] td.name').evaluateAll((tds) =>
    tds.map((td) => [...td.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.textContent).join('').trim()),
  );
  const expected = data.rows.filter((r) => r.c[column(data, 'kind')].v === 'type').map((r) => r.c[column(data, 'name')].v);
  check(JSON.stringify(shownTypes) === JSON.stringify(expected), 'types on the page are not in occurrence order');
  check((await view.locator('th[data-column="occurrences"][aria-sort="descending"]').count()) === 1, 'header not marked');
  await shot('header-sort');
  return `${shownTypes.length} op types ordered by occurrences after a header click`;
}

async function columnsAndFilters() {
  const view = await open(KERAS, 'op_types');
  await view.locator('details.options summary').click();
  const form = view.locator('pf-tree-options-form');
  await form.locator('input[value="ops"]').uncheck();
  await form.locator('input[value="self_time_us"]').uncheck();
  await form.locator('input[name="account"]').fill('Conv2D.*,MatMul');
  await form.locator('input[name="hide"]').fill('.*\\(Host\\)');
  await form.locator('button[type="submit"]').click();
  await waitForApplied(view);
  const headers = await view.locator('thead th').allTextContents();
  check(!headers.some((h) => h.includes('Ops') || h.includes('Self time')), `unselected columns shown: ${headers}`);
  const params = { run: KERAS, tag: 'op_types', account_type_regexes: 'Conv2D.*,MatMul', hide_name_regexes: '.*\\(Host\\)',
    select: 'total_time_us,total_time_percent,device_time_us,host_time_us,occurrences,bytes' };
  const data = await api('data', params);
  const shown = await shownNames(view);
  check(JSON.stringify(shown) === JSON.stringify(names(data)), `rows ${shown} differ from ${names(data)}`);
  check(shown.slice(1).every((n) => /^(Conv2D|MatMul)/.test(n)), `types other than Conv2D/MatMul: ${shown}`);
  const [download] = await Promise.all([page.waitForEvent('download', { timeout: TIMEOUT_MS }), view.locator('a.export').click()]);
  const csv = readFileSync(await download.path(), 'utf8');
  check(csv === (await api('data_csv', params, 'text')), 'CSV export does not carry the options');
  await shot('columns-and-filters');
  return `${shown.length} rows: Conv2D/MatMul types only, ops hidden, CSV with the same options`;
}

async function refusedPattern() {
  const view = await open(JAX, 'code_view');
  const before = await view.locator('tbody tr').count();
  await view.locator('details.options summary').click();
  const form = view.locator('pf-tree-options-form');
  await form.locator('input[name="show"]').fill('(a+)+b');
  expect400 = true;
  await form.locator('button[type="submit"]').click();
  const alert = view.locator('[role="alert"]');
  await alert.waitFor({ timeout: TIMEOUT_MS });
  expect400 = false;
  const text = await alert.textContent();
  check(text.includes('exponential'), `message does not say why: ${text}`);
  check((await view.locator('tbody tr').count()) === before, 'the tree changed after a refused pattern');
  await shot('refused-pattern');
  return 'the server says why (a+)+b is refused; the tree stays';
}

async function pprofDownload() {
  const view = await open(JAX, 'code_view');
  const link = view.locator('a.pprof');
  const [download] = await Promise.all([page.waitForEvent('download', { timeout: TIMEOUT_MS }), link.click()]);
  const bytes = readFileSync(await download.path());
  check(bytes[0] === 0x1f && bytes[1] === 0x8b, 'the pprof download is not gzip');
  const expected = Buffer.from(await (await api('data', { run: JAX, tag: 'code_view', format: 'pprof' }, 'response')).arrayBuffer());
  check(bytes.equals(expected), 'the download differs from data?format=pprof');
  check(download.suggestedFilename() === 'code_view.pb.gz', `file name ${download.suggestedFilename()}`);
  const types = await open(KERAS, 'op_types');
  check((await types.locator('a.pprof').count()) === 0, 'op_types offers a pprof it cannot make');
  return `${bytes.length} bytes of profile.proto`;
}

suite.run(
  (opened) => {
    page = opened;
    return [
      ['max depth and order by name', depthAndOrder],
      ['header click sorts', headerClickSorts],
      ['columns, type and name patterns, CSV', columnsAndFilters],
      ['refused pattern', refusedPattern],
      ['pprof download', pprofDownload],
    ];
  },
  // The refused pattern's 400 is shown by the page; Chromium logs the status too.
  { ignoreConsoleError: (message) => expect400 && /status of 400/.test(message.text()) },
);
