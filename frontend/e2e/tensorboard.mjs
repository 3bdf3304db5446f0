// Browser test of the Profile tab inside real TensorBoard: the selection (run, tool, host, the
// trace's time range) lives in TensorBoard's address, so a reload, a copied link and a link with a
// stale or hostile entry all open the right view.
//
//   PROFILE_E2E_TB_URL=http://127.0.0.1:6006/tb/ PROFILE_E2E_ARTIFACTS=/tmp/shots node e2e/tensorboard.mjs
//
// Run by tests/web/test_tensorboard.py against `tensorboard --logdir tests/data --path_prefix /tb`.
// Exit code 0 on success, 1 with a message on the first failure; screenshots are saved.
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launchChromium } from './browser.mjs';

const TB = process.env.PROFILE_E2E_TB_URL;
const ARTIFACTS = process.env.PROFILE_E2E_ARTIFACTS || join(tmpdir(), 'profile-e2e-artifacts');
const TIMEOUT_MS = Number(process.env.PROFILE_E2E_TIMEOUT_MS || 90000);
const RUN = 'jax_two_hosts/multi_jax2__xprof_client';
const TOOL = 'trace_viewer@';
const HOST = '127.0.0.1_19112'; // the second host: a fallback to the first would show
const START_MS = '120.5';
const END_MS = '180.25';

if (!TB) {
  console.error('Set PROFILE_E2E_TB_URL to TensorBoard\'s root, e.g. http://127.0.0.1:6006/');
  process.exit(1);
}
mkdirSync(ARTIFACTS, { recursive: true });
const problems = [];
let page;
let step = 'start';

function check(condition, message) {
  if (!condition) throw new Error(message);
}

/** The Profile tab's iframe, once its app page is loaded. */
async function appFrame() {
  const deadline = Date.now() + TIMEOUT_MS;
  for (;;) {
    const frame = page.frames().find((f) => f.url().includes('/data/plugin/profile/index.html'));
    if (frame) {
      await frame.locator('pf-app').waitFor({ timeout: TIMEOUT_MS });
      return frame;
    }
    check(Date.now() < deadline, 'TensorBoard never showed the Profile tab\'s app');
    await page.waitForTimeout(200);
  }
}

const select = (frame, label) => frame.locator(`pf-select-field[label="${label}"] select`);

/** Waits until the app shows run/tool/host (selectors and the iframe's own address agree). */
async function waitForSelection(frame, run, tool, host) {
  await frame.waitForFunction(
    ([r, t, h]) => {
      const q = new URLSearchParams(location.search);
      return q.get('run') === r && q.get('tool') === t && q.get('host') === h;
    },
    [run, tool, host],
    { timeout: TIMEOUT_MS },
  );
  for (const [label, want] of [['Run', run], ['Tool', tool], ['Host', host]]) {
    await frame.waitForFunction(
      ([l, w]) => document.querySelector('pf-app')?.shadowRoot?.querySelector(`pf-select-field[label="${l}"]`)?.shadowRoot?.querySelector('select')?.value === w,
      [label, want],
      { timeout: TIMEOUT_MS },
    );
  }
}

/** TensorBoard's own hash, decoded as TensorBoard decodes it (`tab&key=value&…`). */
async function tensorBoardHash() {
  return page.evaluate(() => {
    const out = {};
    for (const part of location.hash.slice(1).split('&')) {
      const bits = part.split('=');
      if (bits.length === 1) out.tab = decodeURIComponent(bits[0]);
      else out[decodeURIComponent(bits[0])] = decodeURIComponent(bits[1]);
    }
    return out;
  });
}

async function shot(name) {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`) });
}

async function main() {
  const browser = await launchChromium();
  try {
    const context = await browser.newContext({ viewport: { width: 1366, height: 768 } });
    page = await context.newPage();
    page.on('console', (m) => m.type() === 'error' && !/favicon|Failed to load resource/.test(m.text()) && problems.push(`console error: ${m.text()}`));
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('dialog', (d) => {
      problems.push(`a dialog opened: ${d.message()}`);
      void d.dismiss();
    });

    step = 'a shared link opens the view it names';
    const hash = ['profile', `p.profile.run=${encodeURIComponent(RUN)}`, `p.profile.tool=${encodeURIComponent(TOOL)}`,
      `p.profile.host=${encodeURIComponent(HOST)}`, `p.profile.start_ms=${START_MS}`, `p.profile.end_ms=${END_MS}`].join('&');
    await page.goto(new URL('#' + hash, TB).href);
    let frame = await appFrame();
    await waitForSelection(frame, RUN, TOOL, HOST);
    let q = new URLSearchParams(await frame.evaluate(() => location.search));
    check(q.get('start_ms') === START_MS && q.get('end_ms') === END_MS, `the trace range was not restored: ${q}`);
    await frame.locator('pf-trace-view').waitFor({ timeout: TIMEOUT_MS });
    await shot('tensorboard-link-trace');

    step = 'picking another tool writes TensorBoard\'s address';
    await select(frame, 'Tool').selectOption('hlo_stats');
    await waitForSelection(frame, RUN, 'hlo_stats', HOST);
    await page.waitForFunction(() => location.hash.includes('p.profile.tool=hlo_stats'), null, { timeout: TIMEOUT_MS });
    let tb = await tensorBoardHash();
    check(tb.tab === 'profile' && tb['p.profile.run'] === RUN && tb['p.profile.host'] === HOST, `TensorBoard's hash: ${JSON.stringify(tb)}`);
    check(!('p.profile.start_ms' in tb), `the trace range stayed with another tool: ${JSON.stringify(tb)}`);

    step = 'a reload of TensorBoard keeps run, tool and host';
    await page.reload();
    frame = await appFrame();
    await waitForSelection(frame, RUN, 'hlo_stats', HOST);
    await frame.locator('pf-data-table tbody tr').first().waitFor({ timeout: TIMEOUT_MS });
    await shot('tensorboard-reloaded');

    step = 'Copy link gives TensorBoard\'s address of this view';
    await frame.locator('pf-copy-link button.copy-link').click();
    const link = await frame.locator('pf-copy-link input.link').inputValue();
    check(link === page.url(), `the copied link ${link} is not TensorBoard's address ${page.url()}`);
    check(new URL(link).pathname.endsWith('/tb/') && !link.includes('/data/plugin/'), `the link points into the iframe: ${link}`);
    await shot('tensorboard-copy-link');
    const other = await browser.newContext({ viewport: { width: 1366, height: 768 } });
    const saved = page;
    page = await other.newPage();
    await page.goto(link);
    await waitForSelection(await appFrame(), RUN, 'hlo_stats', HOST);
    await other.close();
    page = saved;

    step = 'a stale run and a hostile host fall back with a note';
    const hostile = '<img src=x onerror=alert(1)>';
    await page.goto(new URL('#profile&p.profile.run=gone%2Frun&p.profile.host=' + encodeURIComponent(hostile), TB).href);
    await page.reload(); // a hash change alone does not reload TensorBoard's tab
    frame = await appFrame();
    const note = frame.locator('pf-message.notice');
    await note.waitFor({ timeout: TIMEOUT_MS });
    const text = await note.evaluate((el) => el.shadowRoot.textContent.replace(/\s+/g, ' '));
    check(text.includes('Run "gone/run" was not found'), `the note says: ${text}`);
    const runs = await select(frame, 'Run').evaluate((el) => [...el.options].map((o) => o.value));
    await frame.waitForFunction((r) => new URLSearchParams(location.search).get('run') === r, runs[0], { timeout: TIMEOUT_MS });
    await frame.locator('pf-tool-view > *:not(pf-skeleton)').first().waitFor({ timeout: TIMEOUT_MS });
    tb = await tensorBoardHash();
    check(tb['p.profile.run'] === runs[0] && tb['p.profile.host'] !== hostile, `TensorBoard's hash kept the bad link: ${JSON.stringify(tb)}`);
    const images = await frame.evaluate(() => {
      const count = (root) => root.querySelectorAll('img').length + [...root.querySelectorAll('*')].reduce((n, el) => n + (el.shadowRoot ? count(el.shadowRoot) : 0), 0);
      return count(document);
    });
    check(images === 0, `markup from the link was inserted (${images} <img>)`);
    await shot('tensorboard-stale-link');
  } finally {
    await browser.close();
  }
}

main().then(
  () => {
    if (problems.length) {
      console.error(`e2e FAILED: ${problems.join('\n')}`);
      process.exit(1);
    }
    console.log('1 passed (TensorBoard: link, reload, copy link, stale link)');
  },
  (error) => {
    console.error(`e2e FAILED at "${step}": ${error.message}`);
    process.exit(1);
  },
);
