// The frame of a browser test that walks a list of checks on one page: the target from the
// environment, the API client, screenshots named after the suite, and the main loop (launch
// Chromium, open one page under the strict CSP, run each check, screenshot a failure, report).
// The checks stay in their scripts; only this frame is shared.
//
//   const suite = e2eSuite('model');
//   let page;
//   async function someCheck(run) { await page.goto(suite.appUrl({ run, tool })); ...; return 'what was seen'; }
//   suite.run(async (opened) => { page = opened; return [[`some check ${run}`, someCheck, run]]; });
//
// Each result line is `ok   <label>: <what the check returned>` or `FAIL <label>: <why>`;
// a failure leaves `<prefix>-failure-<label>.png` in PROFILE_E2E_ARTIFACTS.
import { join } from 'node:path';
import { abort, apiClient, e2eTarget, launchChromium, openPage, query, report, watchConsole } from './browser.mjs';

/** `text` as a file-name part: runs of non-word characters become '-', none at the ends. */
export const slug = (text) => text.replace(/[^\w]+/g, '-').replace(/^-|-$/g, '');

/**
 * One browser test: `prefix` names its screenshots; `timeoutMs` is the default wait when
 * PROFILE_E2E_TIMEOUT_MS is not set.
 */
export function e2eSuite(prefix, { timeoutMs = 60000 } = {}) {
  const { base, pluginBase, artifacts } = e2eTarget();
  const suite = {
    base,
    pluginBase,
    artifacts,
    timeoutMs: Number(process.env.PROFILE_E2E_TIMEOUT_MS || timeoutMs),
    api: apiClient(pluginBase),
    problems: [],
    results: [],
    page: undefined,
    step: 'start',
    /** The app's page for these query parameters. */
    appUrl: (params) => new URL(`?${query(params)}`, base).href,
    /** A full-page screenshot from the top, `<prefix>-<name>.png`. */
    async shot(name) {
      await suite.page.evaluate(() => window.scrollTo(0, 0));
      await suite.page.screenshot({ path: join(artifacts, `${prefix}-${slug(name)}.png`), fullPage: true });
    },
    /**
     * Runs the checks `prepare(page)` returns ([label, fn, ...args]: `fn(...args)` answers what it
     * saw or throws), then reports and exits. Options: `viewport`; `ignoreConsoleError(message)`,
     * which replaces the default console watch (`watchConsole`) by one that records every console
     * error it does not ignore; `reportSuffix` for the count line.
     */
    run(prepare, options = {}) {
      return runChecks(suite, prefix, prepare, options).catch((error) => abort(error, suite.step));
    },
  };
  return suite;
}

async function runChecks(suite, prefix, prepare, { viewport, ignoreConsoleError, reportSuffix = '' }) {
  const browser = await launchChromium();
  let failed = 0;
  try {
    const page = await openPage(browser, suite.base.origin, suite.problems, { viewport });
    suite.page = page;
    if (ignoreConsoleError) watchEveryConsoleError(page, suite, ignoreConsoleError);
    else watchConsole(page, suite.problems, () => suite.step);
    for (const [label, fn, ...args] of await prepare(page)) {
      suite.step = label;
      try {
        suite.results.push(`ok   ${label}: ${await fn(...args)}`);
      } catch (error) {
        failed++;
        suite.results.push(`FAIL ${label}: ${error?.message ?? error}`);
        const path = join(suite.artifacts, `${prefix}-failure-${slug(label)}.png`);
        await page.screenshot({ path, fullPage: true }).catch(() => {});
      }
    }
  } finally {
    await browser.close();
  }
  report(suite.results, failed, suite.problems, reportSuffix);
}

/** Console errors (unless `ignore(message)`) and page errors of `page`, named by the running check. */
function watchEveryConsoleError(page, suite, ignore) {
  page.on('console', (message) => {
    if (message.type() !== 'error' || ignore(message)) return;
    suite.problems.push(`console error in "${suite.step}": ${message.text()}`);
  });
  page.on('pageerror', (error) => suite.problems.push(`page error in "${suite.step}": ${error.message}`));
}
