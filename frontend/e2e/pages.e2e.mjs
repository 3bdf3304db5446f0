// Every page on every fixture, as a user sees it at 1366x768 (real headless Chromium).
//
//   PROFILE_E2E_URL=http://127.0.0.1:8791/ PROFILE_E2E_ARTIFACTS=/tmp/shots node e2e/pages.e2e.mjs
//
// For each run and each tool `run_tools` lists, opens the page through a deep link, waits for the
// view, and checks what a reader sees (text through every shadow root, only rendered elements):
// no HTML markup shown as text, no "Section 3" (the page has no numbered sections), no "NaN" / "undefined" / "[object Object]", and data tables
// whose shown columns fit the window (the Columns menu has the others). A screenshot of each page lands in PROFILE_E2E_ARTIFACTS as
// `page-<run>-<tool>.png`. Fails on requests to another origin, page errors and CSP violations.
import { join } from 'node:path';
import { abort, e2eTarget, enforceStrictCsp, guardOrigin, launchChromium, report } from './browser.mjs';

const TIMEOUT_MS = Number(process.env.PROFILE_E2E_TIMEOUT_MS || 120000);
// HTML a converter may put into a string; C++ template arguments (`vector<float>`) are not markup.
const MARKUP = /<\/?(a|b|br|div|p|span|li|ul|ol|i|em|strong|img|script|table|tr|td|code|pre|font|u|h[1-6])(\s[^<>]*)?\/?>/i;
const BROKEN = /\bNaN\b|\bundefined\b|\[object Object\]/;
// Converters refer to numbered sections the page does not have.
const NO_SUCH_PART = /\bSection \d\b/;

const { base, pluginBase, artifacts: ARTIFACTS } = e2eTarget();

async function api(route, params = {}) {
  const response = await fetch(new URL(`${route}?${new URLSearchParams(params)}`, pluginBase));
  if (!response.ok) throw new Error(`GET ${route} answered ${response.status}`);
  return response.json();
}

/** The text a reader sees: rendered text nodes and form values, through shadow roots. */
function visibleText(root) {
  const parts = [];
  const walk = (node) => {
    if (node.nodeType === Node.TEXT_NODE) {
      const parent = node.parentElement;
      if (parent && parent.getClientRects().length && getComputedStyle(parent).visibility !== 'hidden') parts.push(node.textContent);
      return;
    }
    if (node.nodeType !== Node.ELEMENT_NODE && node.nodeType !== Node.DOCUMENT_FRAGMENT_NODE) return;
    if (node.nodeType === Node.ELEMENT_NODE) {
      if (['SCRIPT', 'STYLE', 'TEMPLATE'].includes(node.tagName)) return;
      if (node.tagName === 'OPTION') return; // a closed select shows only its value
      if (node.tagName === 'SELECT' || node.tagName === 'INPUT') parts.push(node.value ?? '');
      if (node.shadowRoot) walk(node.shadowRoot);
    }
    for (const child of node.childNodes) walk(child);
  };
  walk(root);
  return parts.join(' ').replace(/\s+/g, ' ');
}

/** Columns of data tables a reader cannot see at this width without scrolling sideways. */
function hiddenColumns(root) {
  const out = [];
  const walk = (node) => {
    for (const box of node.querySelectorAll('.scroll')) {
      const edge = box.getBoundingClientRect().right;
      for (const th of box.querySelectorAll('thead th')) {
        if (th.getBoundingClientRect().right > edge + 1) out.push(th.textContent.trim());
      }
    }
    for (const child of node.querySelectorAll('*')) if (child.shadowRoot) walk(child.shadowRoot);
  };
  walk(root);
  return [...new Set(out)];
}

async function main() {
  const browser = await launchChromium();
  const problems = [];
  const results = [];
  let failed = 0;
  try {
    const context = await browser.newContext({ viewport: { width: 1366, height: 768 } });
    await enforceStrictCsp(context, base.origin);
    const page = await context.newPage();
    guardOrigin(page, base.origin, problems);
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error' && /CSP violation/.test(message.text())) problems.push(message.text());
    });
    for (const run of await api('runs')) {
      for (const tool of await api('run_tools', { run })) {
        const label = `${run} ${tool}`;
        try {
          await page.goto(new URL(`?${new URLSearchParams({ run, tool })}`, base).href);
          // The tool's view (or the card saying why there is none), not the loading skeleton.
          await page.waitForFunction(() => {
            const root = document.querySelector('pf-app')?.shadowRoot?.querySelector('pf-tool-view')?.shadowRoot;
            return !!root && [...root.children].some((el) => /^pf-.*-view$/.test(el.localName) || el.localName === 'pf-message');
          }, null, { timeout: TIMEOUT_MS });
          await page.waitForTimeout(500); // charts and tables draw on the next frames
          const shown = await page.evaluate(visibleText, await page.evaluateHandle(() => document.body));
          const markup = MARKUP.exec(shown);
          const broken = BROKEN.exec(shown);
          const hidden = await page.evaluate(hiddenColumns, await page.evaluateHandle(() => document.body));
          await page.screenshot({ path: join(ARTIFACTS, `page-${run.replace(/\W+/g, '_')}-${tool.replace(/\W+/g, '')}.png`) });
          const issues = [];
          if (markup) issues.push(`markup shown as text: "…${shown.slice(Math.max(0, markup.index - 40), markup.index + 60)}…"`);
          const noSuch = NO_SUCH_PART.exec(shown);
          if (noSuch) issues.push(`refers to a part the page lacks: "…${shown.slice(Math.max(0, noSuch.index - 40), noSuch.index + 40)}…"`);
          if (broken) issues.push(`broken value: "…${shown.slice(Math.max(0, broken.index - 40), broken.index + 40)}…"`);
          if (hidden.length) issues.push(`columns out of view at 1366 px: ${hidden.join(', ')}`);
          if (issues.length) {
            failed++;
            results.push(`FAIL ${label}: ${issues.join('; ')}`);
          } else results.push(`ok   ${label}`);
        } catch (error) {
          failed++;
          results.push(`FAIL ${label}: ${error?.message ?? error}`);
        }
      }
    }
  } finally {
    await browser.close();
  }
  report(results, failed, problems, `; screenshots in ${ARTIFACTS}`);
}

main().catch((error) => abort(error));
