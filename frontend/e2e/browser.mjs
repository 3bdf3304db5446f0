// What every browser test shares: Debian's Chromium launched headless, the strict CSP enforced on
// the app's pages, a guard that records any request leaving the server's origin, and a parser for
// the CSV files the page downloads.
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
export const STRICT_CSP = "default-src 'self'; script-src 'self'; style-src 'self'; object-src 'none'";

/**
 * The server under test (PROFILE_E2E_URL, required) and the screenshot folder
 * (PROFILE_E2E_ARTIFACTS, created); exits with a usage line when the URL is missing.
 */
export function e2eTarget() {
  const url = process.env.PROFILE_E2E_URL;
  if (!url) {
    console.error('Set PROFILE_E2E_URL to the server root, e.g. http://127.0.0.1:8791/');
    process.exit(1);
  }
  const base = new URL(url);
  const artifacts = process.env.PROFILE_E2E_ARTIFACTS || join(tmpdir(), 'profile-e2e-artifacts');
  mkdirSync(artifacts, { recursive: true });
  return { base, pluginBase: new URL('data/plugin/profile/', base), artifacts };
}

/** Headless Chromium; `extraArgs` adds switches (e.g. `--host-resolver-rules=...`). */
export function launchChromium(extraArgs = []) {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', '--disable-quic', ...extraArgs],
  });
}

/** Adds the strict CSP to the app's HTML when the server sends none, and logs violations as console errors. */
export async function enforceStrictCsp(context, origin) {
  await context.route('**/*', async (route) => {
    const request = route.request();
    if (request.resourceType() !== 'document' || new URL(request.url()).origin !== origin) return route.fallback();
    const response = await route.fetch();
    const headers = response.headers();
    if (!headers['content-security-policy']) headers['content-security-policy'] = STRICT_CSP;
    return route.fulfill({ response, headers });
  });
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => console.error(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI}`));
  });
}

/** Records every network request of `page` to another origin in `problems`; `onRequest(url)` sees the others. */
export function guardOrigin(page, origin, problems, onRequest = () => {}) {
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (['data:', 'blob:', 'about:'].includes(url.protocol)) return;
    if (url.origin !== origin) problems.push(`request to another origin: ${request.url()}`);
    else onRequest(url);
  });
}

/** Rows of cells of a CSV text as the server and the page write it (quoted fields, "" escapes). */
export function parseCsv(text) {
  return text.replace(/\n$/, '').split('\n').map(parseCsvLine);
}

export function parseCsvLine(line) {
  const cells = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      cells.push(cell);
      cell = '';
    } else cell += ch;
  }
  cells.push(cell);
  return cells;
}

/** Fails the current check with `message` unless `condition` holds. */
export function check(condition, message) {
  if (!condition) throw new Error(message);
}

/** A query string of the parameters that are set (undefined and '' are left out). */
export function query(params) {
  return new URLSearchParams(Object.entries(params).filter(([, v]) => v !== undefined && v !== '')).toString();
}

/** `api(route, params, as)`: GET a plugin route as JSON (default), `'text'` or the raw `'response'`. */
export function apiClient(pluginBase) {
  return async (route, params = {}, as = 'json') => {
    const response = await fetch(new URL(`${route}?${query(params)}`, pluginBase));
    if (as === 'response') return response;
    check(response.ok, `GET ${route} ${query(params)} answered ${response.status}`);
    return as === 'text' ? response.text() : response.json();
  };
}

/**
 * Records console and page errors of `page` in `problems` (`where()` names the running check).
 * Chromium logs every 4xx of a fetch; a tool answering 404 NOT_APPLICABLE is shown by the page.
 */
export function watchConsole(page, problems, where = () => '') {
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    const from = message.location()?.url ?? '';
    if (/^Failed to load resource.*status of 404/.test(message.text()) && /\/data\?/.test(from)) return;
    problems.push(`console error in "${where()}": ${message.text()} ${from}`);
  });
  page.on('pageerror', (error) => problems.push(`page error in "${where()}": ${error.message}`));
}

/**
 * A page of a fresh context (downloads on, 1280x900 unless `viewport` says otherwise) under the
 * strict CSP, with requests leaving `origin` recorded in `problems` (`onRequest` sees every one).
 */
export async function openPage(browser, origin, problems, { viewport = { width: 1280, height: 900 }, onRequest } = {}) {
  const context = await browser.newContext({ acceptDownloads: true, viewport });
  await enforceStrictCsp(context, origin);
  const page = await context.newPage();
  guardOrigin(page, origin, problems, onRequest);
  return page;
}

/**
 * Ends a browser test: adds the page-health line (requests to other origins, console errors,
 * CSP violations collected in `problems`), prints every result and the count, exits 1 on failure.
 */
export function report(results, failed, problems, suffix = '') {
  if (problems.length) {
    failed++;
    results.push(`FAIL page health:\n  ${problems.join('\n  ')}`);
  } else results.push('ok   page health: same-origin only, no console errors or CSP violations');
  console.log(results.join('\n'));
  console.log(`${results.length - failed} passed, ${failed} failed${suffix}`);
  process.exit(failed ? 1 : 0);
}

/** An error that stopped a browser test before it could report: say where, exit 1. */
export function abort(error, step = '') {
  console.error(`e2e FAILED${step ? ` at "${step}"` : ''}: ${error?.message ?? error}`);
  process.exit(1);
}
