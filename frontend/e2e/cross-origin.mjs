// Pages of other origins attack a real server, in real headless Chromium (docs/security.md).
// Run by tests/web/test_frontend.py, which starts the server on an empty logdir and a
// profiler server that answers every capture (so any capture that gets through writes a
// session), and afterwards checks the logdir and the profiler's requests:
//
//   PROFILE_E2E_URL=http://127.0.0.1:PORT/ PROFILE_ATTACK_PROFILER=127.0.0.1:GRPC_PORT node e2e/cross-origin.mjs
//
// PROFILE_E2E_URL may be the link of a server with an access token (`?token=…`, as the live page
// prints): then the attack page is given that token too, as if it had leaked, so what stops it is
// the capture token and the Host guard alone; the page's own capture sends both tokens.
//
// 1. CSRF: this script serves an attack page on another port of loopback, opened both as
//    http://127.0.0.1:<its port>/ (same site, other origin) and http://evil.example:<its port>/
//    (another site; Chromium resolves the name to 127.0.0.1). The page tries to start a capture
//    with an <img> (GET), a form POST, a no-cors fetch POST, a fetch POST with a made-up token and
//    a no-cors GET, and tries to read the capture token: it must not read it.
// 2. DNS rebinding: the server opened as http://rebind.attacker.example:PORT/ refuses the page,
//    `runs` and `capture_token` (403), so a rebound page reads nothing.
// 3. The control: one capture through the server's own page and its dialog succeeds; its session
//    name is printed as `captured <session>`.
// Prints one line per check; exits 0 when all hold.
import { createServer } from 'node:http';
import { abort, check, launchChromium } from './browser.mjs';

const TIMEOUT_MS = Number(process.env.PROFILE_E2E_TIMEOUT_MS || 60000);
const target = process.env.PROFILE_E2E_URL;
const profiler = process.env.PROFILE_ATTACK_PROFILER;
if (!target || !profiler) abort('Set PROFILE_E2E_URL (the server) and PROFILE_ATTACK_PROFILER (host:port).');
const base = new URL(target);
const accessToken = base.searchParams.get('token') ?? '';
base.search = '';
const pluginBase = new URL('data/plugin/profile/', base).href;
const RESOLVER_RULES = '--host-resolver-rules=MAP evil.example 127.0.0.1, MAP rebind.attacker.example 127.0.0.1';

// The attacker's page: every way a page can make a browser send a request to another origin.
const ATTACK_PAGE = `<!doctype html><title>attack</title><script type="module">
const q = new URLSearchParams(location.search);
const target = q.get('target');
const access = q.get('access');
const withAccess = (u) => (access ? u + (u.includes('?') ? '&' : '?') + 'token=' + encodeURIComponent(access) : u);
const params = new URLSearchParams({ service_addr: q.get('addr'), duration: '100', async: '1' });
const url = withAccess(target + 'capture_profile');
const sep = url.includes('?') ? '&' : '?';
const settle = (p) => p.then((r) => (r.type === 'opaque' ? 'opaque' : 'read ' + r.status), () => 'blocked');
function img() {
  return new Promise((resolve) => {
    const image = new Image();
    image.onload = image.onerror = () => resolve('settled');
    image.src = url + sep + params;
  });
}
function form() {
  return new Promise((resolve) => {
    const frame = document.createElement('iframe');
    frame.name = 'sink';
    document.body.append(frame);
    const f = document.createElement('form');
    Object.assign(f, { method: 'POST', action: url, target: 'sink' });
    for (const [name, value] of params) f.append(Object.assign(document.createElement('input'), { type: 'hidden', name, value }));
    document.body.append(f);
    frame.onload = () => resolve('submitted');
    setTimeout(() => resolve('timeout'), 5000);
    f.submit();
  });
}
const results = { img: await img(), form: await form() };
results.noCorsPost = await settle(fetch(url, { method: 'POST', mode: 'no-cors', body: params }));
results.postWithGuessedToken = await settle(fetch(url, { method: 'POST', body: params, headers: { 'X-TBProf-Token': 'guess' } }));
results.noCorsGet = await settle(fetch(url + sep + params, { mode: 'no-cors' }));
results.tokenRead = await fetch(withAccess(target + 'capture_token')).then((r) => r.json()).then((j) => typeof j.token === 'string', () => false);
window.attackDone = results;
</script>`;

function serveAttackPage() {
  return new Promise((resolve) => {
    const server = createServer((req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(ATTACK_PAGE);
    });
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

async function attackFrom(browser, origin) {
  const page = await browser.newPage();
  try {
    const query = new URLSearchParams({ target: pluginBase, addr: profiler, access: accessToken });
    await page.goto(`${origin}/?${query}`);
    const handle = await page.waitForFunction(() => window.attackDone, null, { timeout: TIMEOUT_MS });
    const results = await handle.jsonValue();
    check(results.tokenRead === false, `a page at ${origin} read the capture token`);
    return `attack page at ${origin}: ${JSON.stringify(results)}`;
  } finally {
    await page.close();
  }
}

async function rebound(browser) {
  const page = await browser.newPage();
  try {
    const url = `http://rebind.attacker.example:${base.port}/`;
    const response = await page.goto(url);
    check(response.status() === 403, `the page under a rebound name answered ${response.status()}`);
    // With the access token too, when the server has one: the Host guard refuses them first.
    const statuses = await page.evaluate(async (access) => {
      const routes = ['runs', 'capture_token', 'data?run=x&tag=overview_page'];
      const suffix = (r) => (access ? (r.includes('?') ? '&' : '?') + 'token=' + encodeURIComponent(access) : '');
      return Promise.all(routes.map((r) => fetch('/data/plugin/profile/' + r + suffix(r)).then((x) => x.status)));
    }, accessToken);
    check(statuses.every((s) => s === 403), `routes under a rebound name answered ${statuses}`);
    return `rebound name ${url}: page 403, runs/capture_token/data ${statuses.join('/')}`;
  } finally {
    await page.close();
  }
}

async function captureThroughThePage(browser) {
  const page = await browser.newPage();
  try {
    await page.goto(target); // the link, with the access token if the server has one
    await page.locator('pf-app header button.primary').click({ timeout: TIMEOUT_MS });
    await page.locator('pf-capture-dialog #service-addr').fill(profiler);
    await page.locator('pf-capture-dialog #duration').fill('100');
    await page.locator('pf-capture-dialog button[type="submit"]').click();
    const done = page.locator('pf-capture-dialog .status.done, pf-capture-dialog .status.failed');
    await done.first().waitFor({ timeout: TIMEOUT_MS });
    const shown = (await done.first().textContent()).trim();
    check(await page.locator('pf-capture-dialog .status.done').count(), `the page's own capture failed: ${shown}`);
    await page.waitForFunction(() => new URLSearchParams(location.search).get('run'), null, { timeout: TIMEOUT_MS });
    return await page.evaluate(() => new URLSearchParams(location.search).get('run'));
  } finally {
    await page.close();
  }
}

async function main() {
  const attacker = await serveAttackPage();
  const browser = await launchChromium([RESOLVER_RULES]);
  const port = attacker.address().port;
  try {
    for (const origin of [`http://127.0.0.1:${port}`, `http://evil.example:${port}`]) console.log(`ok   ${await attackFrom(browser, origin)}`);
    console.log(`ok   ${await rebound(browser)}`);
    console.log(`captured ${await captureThroughThePage(browser)}`);
  } finally {
    await browser.close();
    attacker.close();
  }
}

main().catch((error) => abort(error));
