// Browser test: links between tools lead only to tools the run lists (issue 28, item 2), in real
// headless Chromium.
//
//   PROFILE_E2E_URL=http://127.0.0.1:8791/ PROFILE_E2E_ARTIFACTS=/tmp/shots node e2e/tool-links.e2e.mjs
//
// A JAX profile has no TensorFlow ops, so its run does not list TF stats (framework_op_stats):
// - the trace viewer's event details offer no "Show in TF stats" (a TensorFlow run's do: the
//   control that the check can see the button at all);
// - the overview's top-10 card says there are no TensorFlow ops and links HLO stats and
//   op_profile, "Ops placed on host" reads n/a, every tool link of the page names a listed tool,
//   and the HLO stats link opens a table with rows.
// Fails on requests to other origins, console errors, page errors or CSP violations.
// Screenshots land in PROFILE_E2E_ARTIFACTS (links-*.png).
import { join } from 'node:path';
import { abort, apiClient, check, e2eTarget, launchChromium, openPage, query, report, watchConsole } from './browser.mjs';

const { base, pluginBase, artifacts: ARTIFACTS } = e2eTarget();
const TIMEOUT_MS = Number(process.env.PROFILE_E2E_TIMEOUT_MS || 60000);
const TRACE = 'trace_viewer@';
const OP_STATS = /^(framework_op_stats|tensorflow_stats)$/;

const problems = [];
const results = [];
let page;
let step = 'start';

const api = apiClient(pluginBase);
const appUrl = (params) => new URL(`?${query(params)}`, base).href;
const slug = (text) => text.replace(/[^\w]+/g, '-').replace(/^-|-$/g, '');

async function shot(name) {
  await page.screenshot({ path: join(ARTIFACTS, `links-${slug(name)}.png`), fullPage: true });
}

/** A name of an event the trace viewer finds by search in the run's first host. */
async function searchableName(run, host) {
  const answer = await api('data', { run, tag: TRACE, host, format: 'columnar', resolution: 400, max_events: 2000 });
  const names = [...new Set(answer.rows.flatMap((row) => row.name.map((i) => answer.strings[i])))].filter((n) => n && n.length >= 4);
  for (const name of names.slice(0, 20)) {
    const found = await api('data', { run, tag: TRACE, host, search: name });
    if (found.total >= 1) return name;
  }
  throw new Error(`no searchable event name in ${run}`);
}

/** Opens the run's trace viewer, selects an event by search; whether "Show in TF stats" shows. */
async function opStatsButtonShown(run) {
  const host = (await api('hosts', { run, tag: TRACE }))[0]?.hostname ?? '';
  const name = await searchableName(run, host);
  await page.goto(appUrl({ run, tool: TRACE, host }));
  const input = page.locator('pf-trace-view input[type="search"]');
  await input.waitFor({ timeout: TIMEOUT_MS });
  await page.locator('pf-trace-timeline canvas').waitFor({ timeout: TIMEOUT_MS });
  await input.fill(name);
  await input.press('Enter');
  await page.locator('pf-trace-details h3.event-name').waitFor({ timeout: TIMEOUT_MS });
  await page.waitForTimeout(300); // the details render in one pass; let it settle
  await shot(`trace-${run}`);
  return { name, shown: (await page.locator('pf-trace-details button.op-stats').count()) > 0 };
}

async function traceLinkOnJax(run) {
  const tools = await api('run_tools', { run });
  check(!tools.some((t) => OP_STATS.test(t)), `${run} lists TF stats: ${tools}`);
  const { name, shown } = await opStatsButtonShown(run);
  check(!shown, `"Show in TF stats" is offered for "${name}" though the run does not list TF stats`);
  return `"${name}" selected, no "Show in TF stats"`;
}

async function traceLinkOnTensorflow(run) {
  const tools = await api('run_tools', { run });
  check(tools.some((t) => OP_STATS.test(t)), `${run} does not list TF stats: ${tools}`);
  const { name, shown } = await opStatsButtonShown(run);
  check(shown, `"Show in TF stats" is missing for "${name}" though the run lists TF stats`);
  return `"${name}" selected, "Show in TF stats" offered`;
}

async function overviewOnJax(run) {
  const tools = await api('run_tools', { run });
  await page.goto(appUrl({ run, tool: 'overview_page' }));
  const view = page.locator('pf-overview-view');
  const card = view.locator('section.top-ops p.no-framework-ops');
  await card.waitFor({ timeout: TIMEOUT_MS });
  const said = (await card.textContent()).replace(/\s+/g, ' ');
  check(/no TensorFlow ops/.test(said), `the top-10 card says "${said}"`);
  const cardTools = await card.locator('a.tool-link').evaluateAll((links) => links.map((a) => new URL(a.href).searchParams.get('tool')));
  check(cardTools.join() === 'hlo_stats,op_profile', `the top-10 card links ${cardTools}`);
  const summary = (await view.locator('section.summary').textContent()).replace(/\s+/g, ' ');
  check(/Ops placed on host\s*n\/a/.test(summary), `the summary reads "${summary}"`);
  await view.locator('section.recommendation a.tool-link').first().waitFor({ timeout: TIMEOUT_MS });
  const linked = await view.locator('a.tool-link').evaluateAll((links) => links.map((a) => new URL(a.href).searchParams.get('tool')));
  const unlisted = linked.filter((t) => !tools.includes(t));
  check(linked.includes('hlo_stats') && unlisted.length === 0, `tool links ${linked}; not listed: ${unlisted}`);
  await shot(`overview-${run}`);
  await card.locator('a.tool-link', { hasText: /HLO/i }).click();
  await page.waitForFunction(() => new URLSearchParams(location.search).get('tool') === 'hlo_stats', null, { timeout: TIMEOUT_MS });
  await page.locator('pf-hlo-stats-view pf-data-table tbody tr').first().waitFor({ timeout: TIMEOUT_MS });
  await shot(`overview-link-hlo-stats-${run}`);
  return `top-10 card links ${cardTools.join(' and ')}; ${linked.length} tool links, all listed; HLO stats opens with rows`;
}

async function main() {
  const browser = await launchChromium();
  let failed = 0;
  try {
    page = await openPage(browser, base.origin, problems, { viewport: { width: 1366, height: 768 } });
    watchConsole(page, problems, () => step);
    const runs = await api('runs');
    const jax = runs.find((r) => r.startsWith('jax_cpu_train'));
    const tf = runs.find((r) => r.startsWith('tf_keras2_fit'));
    check(jax && tf, `expected the jax_cpu_train and tf_keras2_fit runs, found ${runs}`);
    for (const [name, fn, run] of [
      ['trace viewer: no "Show in TF stats" on JAX', traceLinkOnJax, jax],
      ['trace viewer: "Show in TF stats" on TensorFlow', traceLinkOnTensorflow, tf],
      ['overview: links only to listed tools on JAX', overviewOnJax, jax],
    ]) {
      step = `${name} ${run}`;
      try {
        results.push(`ok   ${step}: ${await fn(run)}`);
      } catch (error) {
        failed++;
        results.push(`FAIL ${step}: ${error?.message ?? error}`);
        await page.screenshot({ path: join(ARTIFACTS, `links-failure-${slug(step)}.png`), fullPage: true }).catch(() => {});
      }
    }
  } finally {
    await browser.close();
  }
  report(results, failed, problems);
}

main().catch((error) => abort(error, step));
