// Browser test of "Copy link" and of links on the standalone page: a link naming run, tool, host
// and the trace's time range reopens that view after a reload and in a new page; a link naming a
// tool the run lacks or a hostile host falls back with a note and inserts no markup.
// (Inside TensorBoard: e2e/tensorboard.mjs.)
//
//   PROFILE_E2E_URL=http://127.0.0.1:8791/ node e2e/share-link.e2e.mjs
import { check } from './browser.mjs';
import { e2eSuite } from './harness.mjs';

const suite = e2eSuite('share-link');
const TIMEOUT_MS = suite.timeoutMs;
const VIEW = { run: 'jax_two_hosts/multi_jax2__xprof_client', tool: 'trace_viewer@', host: '127.0.0.1_19112', start_ms: '120.5', end_ms: '180.25' };
let page;

async function waitForView(page, view) {
  await page.waitForFunction(
    (want) => {
      const q = new URLSearchParams(location.search);
      const app = document.querySelector('pf-app')?.shadowRoot;
      const value = (label) => app?.querySelector(`pf-select-field[label="${label}"]`)?.shadowRoot?.querySelector('select')?.value;
      return Object.entries(want).every(([k, v]) => q.get(k) === v) && value('Run') === want.run && value('Tool') === want.tool && value('Host') === want.host;
    },
    view,
    { timeout: TIMEOUT_MS },
  );
}

async function reopensAfterReload() {
  await page.goto(suite.appUrl(VIEW));
  await waitForView(page, VIEW);
  await page.locator('pf-trace-view').waitFor({ timeout: TIMEOUT_MS });
  await page.reload();
  await waitForView(page, VIEW);
  return 'run, tool, host and range kept';
}

async function copyLink() {
  await page.locator('pf-copy-link button.copy-link').click();
  const link = await page.locator('pf-copy-link input.link').inputValue();
  check(link === page.url(), `the copied link ${link} is not the page's address ${page.url()}`);
  await page.screenshot({ path: `${suite.artifacts}/share-link-copy.png` });
  const second = await page.context().newPage();
  await second.goto(link);
  await waitForView(second, VIEW);
  await second.close();
  return 'a new page opens the same view';
}

async function staleEntries() {
  const hostile = '<img src=x onerror=alert(1)>';
  await page.goto(suite.appUrl({ run: VIEW.run, tool: 'no_such_tool', host: hostile }));
  const note = page.locator('pf-message.notice');
  await note.waitFor({ timeout: TIMEOUT_MS });
  const text = await note.evaluate((el) => el.shadowRoot.textContent.replace(/\s+/g, ' '));
  check(text.includes('tool "no_such_tool" has no data for run ' + VIEW.run), `the note says: ${text}`);
  await page.goto(suite.appUrl({ run: VIEW.run, tool: VIEW.tool, host: hostile }));
  await note.waitFor({ timeout: TIMEOUT_MS });
  const hostNote = await note.evaluate((el) => el.shadowRoot.textContent.replace(/\s+/g, ' '));
  check(hostNote.includes(`host "${hostile}" is not in run`), `the note says: ${hostNote}`);
  const images = await page.evaluate(() => {
    const count = (root) => root.querySelectorAll('img').length + [...root.querySelectorAll('*')].reduce((n, el) => n + (el.shadowRoot ? count(el.shadowRoot) : 0), 0);
    return count(document);
  });
  check(images === 0, `markup from the link was inserted (${images} <img>)`);
  await page.screenshot({ path: `${suite.artifacts}/share-link-stale.png` });
  return 'fell back with notes, no markup inserted';
}

suite.run(
  (opened) => {
    page = opened;
    return [
      ['a link opens run, tool, host and range, also after a reload', reopensAfterReload],
      ['Copy link gives the address that reopens the view', copyLink],
      ['a tool the run lacks and a hostile host fall back with a note', staleEntries],
    ];
  },
  { viewport: { width: 1366, height: 768 } },
);
