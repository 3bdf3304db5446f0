// Browser test of a page that needs an access token, as live.serve's page does (docs/security.md):
// the link with ?token= opens it, the token leaves the address bar, every route request carries it,
// a reload keeps working, and the bare address shows why nothing loads.
//
//   PROFILE_E2E_LIVE_URL='http://127.0.0.1:8792/?token=…' PROFILE_E2E_ARTIFACTS=/tmp/shots node e2e/live-token.e2e.mjs
//
// PROFILE_E2E_LIVE_URL is the link of a server with an access token over logs with at least one
// run (tests/web/test_frontend.py starts one on tests/data). Other PROFILE_E2E_* as the other tests.
import { join } from 'node:path';
import { abort, check, e2eTarget, launchChromium, openPage, report } from './browser.mjs';

const { artifacts: ARTIFACTS } = e2eTarget();
const LINK = process.env.PROFILE_E2E_LIVE_URL;
const TIMEOUT_MS = Number(process.env.PROFILE_E2E_TIMEOUT_MS || 60000);
const ROUTES = /\/(runs|run_tools|hosts|config|data|progress|diagnose)$/;

const problems = [];
const results = [];

if (!LINK || !new URL(LINK).searchParams.get('token')) {
  console.error('Set PROFILE_E2E_LIVE_URL to the link of a server with a token, e.g. http://127.0.0.1:8792/?token=abc');
  process.exit(1);
}
const link = new URL(LINK);
const token = link.searchParams.get('token');
const bare = new URL('/', link);

/** A fresh page (its own storage); `routeUrls` collects the route requests it sends. */
async function freshPage(browser, routeUrls) {
  const onRequest = (url) => ROUTES.test(url.pathname) && routeUrls.push(url);
  return openPage(browser, link.origin, problems, { onRequest });
}

// The runs of the Run selector (not its "Loading…" placeholder, the one option with value="").
const RUN_OPTIONS = 'pf-app pf-select-field[label="Run"] option:not([value=""])';

async function runsShown(page) {
  await page.locator(RUN_OPTIONS).first().waitFor({ state: 'attached', timeout: TIMEOUT_MS });
  return page.locator(RUN_OPTIONS).count();
}

async function withTheLink(browser) {
  const routeUrls = [];
  const page = await freshPage(browser, routeUrls);
  page.on('console', (m) => m.type() === 'error' && problems.push(`console error: ${m.text()}`));
  await page.goto(link.href);
  const runs = await runsShown(page);
  check(runs > 0, 'no run listed');
  check(!new URL(page.url()).searchParams.has('token'), `the token stays in the address bar: ${page.url()}`);
  const without = routeUrls.filter((u) => u.searchParams.get('token') !== token);
  check(routeUrls.length > 0 && without.length === 0, `requests without the token: ${without.join(' ')}`);
  await page.screenshot({ path: join(ARTIFACTS, 'live-token-page.png') });
  await page.goto(bare.href); // a reload of the bare address: the stored token still opens it
  check((await runsShown(page)) === runs, 'the page lost its runs after a reload without the link');
  await page.context().close();
  return `${runs} runs; ${routeUrls.length} route requests, each with the token; token gone from the address`;
}

async function withoutTheLink(browser) {
  const page = await freshPage(browser, []); // a new context: nothing stored, as another user
  await page.goto(bare.href);
  const message = page.locator('pf-app pf-message[kind="error"]');
  await message.waitFor({ timeout: TIMEOUT_MS });
  const text = await message.evaluate((el) => el.shadowRoot.textContent);
  check(text.includes('403') && text.includes('needs the link'), `unexpected message: ${text}`);
  check((await page.locator(RUN_OPTIONS).count()) === 0, 'runs listed without a token');
  await page.screenshot({ path: join(ARTIFACTS, 'live-token-missing.png') });
  await page.context().close();
  return 'the bare address lists nothing and says to open the printed link';
}

async function main() {
  const browser = await launchChromium();
  let failed = 0;
  try {
    for (const [name, fn] of [
      ['with the link', withTheLink],
      ['without the link', withoutTheLink],
    ]) {
      try {
        results.push(`ok   ${name}: ${await fn(browser)}`);
      } catch (error) {
        failed++;
        results.push(`FAIL ${name}: ${error?.message ?? error}`);
      }
    }
  } finally {
    await browser.close();
  }
  report(results, failed, problems);
}

main().catch((error) => abort(error));
