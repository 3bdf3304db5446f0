// Browser test of issue 28 items 9 and 10 (defaults, counts, the raw trace, the trace's host) in
// real headless Chromium at 1366x768 (playwright-core + /usr/bin/chromium).
//
//   PROFILE_E2E_URL=http://127.0.0.1:8791/ PROFILE_E2E_ARTIFACTS=/tmp/shots node e2e/p28view.e2e.mjs
//
// Checks, against what the server answers: the graph and memory viewers open on the busiest
// program (`module_list?order=time`'s first) unless the URL names one; the graph viewer opens on
// the server's start op and says why; the pod viewer explains its two extra steps with the
// overview's own count; "Open raw JSON…" names the size from `size=estimate` and sends nothing
// large before the user confirms; "Download .json.gz" saves a gzip Chrome trace; on a two-host
// session the trace viewer names the host it draws ("1 of 2") and switches on the user's choice;
// a ProfilerHook folder's all_steps run opens on every step, on one time line, and says so.
// Screenshots land in PROFILE_E2E_ARTIFACTS (p28view-*.png).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { abort, apiClient, check, e2eTarget, launchChromium, openPage, query, report, watchConsole } from './browser.mjs';

const { base, pluginBase, artifacts: ARTIFACTS } = e2eTarget();
const TIMEOUT_MS = Number(process.env.PROFILE_E2E_TIMEOUT_MS || 60000);
const TWO_HOSTS = 'jax_two_hosts/multi_jax2__xprof_client';
const MANY_STEPS = 'jax_remote_capture/jax_server__xprof_client';

const problems = [];
const results = [];
const requests = [];
let page;
let step = 'start';

const api = apiClient(pluginBase);
const appUrl = (params) => new URL(`?${query(params)}`, base).href;
const param = (name) => new URL(page.url()).searchParams.get(name) ?? '';
const text = async (locator) => ((await locator.textContent()) ?? '').replace(/\s+/g, ' ').trim();

async function shot(name) {
  await page.screenshot({ path: join(ARTIFACTS, `p28view-${name}.png`) });
}

async function busiest(run) {
  return (await api('module_list', { run, order: 'time' }, 'text')).split(',')[0];
}

async function graphViewerDefaults() {
  const module = await busiest(TWO_HOSTS);
  check(module === 'jit_step(8)', `the busiest program of ${TWO_HOSTS} is ${module}, expected jit_step(8)`);
  const { start } = await api('data', { run: TWO_HOSTS, tag: 'graph_viewer', module_name: module, type: 'ops' });
  await page.goto(appUrl({ run: TWO_HOSTS, tool: 'graph_viewer' }));
  const el = page.locator('pf-tool-view > pf-graph-viewer-view');
  await el.locator(`svg g.node.center[data-op="${start.name}"]`).waitFor({ timeout: TIMEOUT_MS });
  check(param('module_name') === module, `opened on ${param('module_name')}, not the busiest ${module}`);
  check(param('node_name') === start.name, `opened on op ${param('node_name')}, the server's start is ${start.name}`);
  const note = await text(el.locator('p.start-note'));
  check(note.includes(start.name) && note.includes(start.reason), `the note "${note}" does not say why ${start.name}`);
  await shot('graph-viewer-default');
  // The user's choice (a module in the URL) still wins.
  await page.goto(appUrl({ run: TWO_HOSTS, tool: 'graph_viewer', module_name: 'jit_add(12)' }));
  await el.locator('svg g.node.center').waitFor({ timeout: TIMEOUT_MS });
  check(param('module_name') === 'jit_add(12)', `the URL's module was replaced by ${param('module_name')}`);
  return `${module} at ${start.name} (${note}); a module in the URL wins`;
}

async function memoryViewerDefault() {
  const module = await busiest(TWO_HOSTS);
  await page.goto(appUrl({ run: TWO_HOSTS, tool: 'memory_viewer' }));
  await page.locator('pf-tool-view > pf-memory-viewer-view section[aria-label="Memory summary"]').waitFor({ timeout: TIMEOUT_MS });
  check(param('module_name') === module, `the memory viewer opened on ${param('module_name')}, not ${module}`);
  await shot('memory-viewer-default');
  return `opens on ${module}`;
}

async function podStepNote() {
  const pod = await api('data', { run: MANY_STEPS, tag: 'pod_viewer' });
  const podSteps = pod.podStatsSequence.podStatsMap.length;
  await page.goto(appUrl({ run: MANY_STEPS, tool: 'overview_page' }));
  const overview = page.locator('pf-tool-view');
  await overview.getByText(/over \d+ steps/).first().waitFor({ timeout: TIMEOUT_MS });
  const overviewSteps = Number(/over (\d+) steps/.exec(await text(overview.getByText(/over \d+ steps/).first()))[1]);
  await page.goto(appUrl({ run: MANY_STEPS, tool: 'pod_viewer' }));
  const note = page.locator('pf-tool-view > pf-pod-viewer-view p.step-count-note');
  await note.waitFor({ timeout: TIMEOUT_MS });
  const said = await text(note);
  check(said.includes(`All ${podSteps} steps`), `the note "${said}" does not give the pod viewer's ${podSteps} steps`);
  check(said.includes(`so they count ${overviewSteps}.`), `the note "${said}" does not match the overview's ${overviewSteps} steps`);
  await shot('pod-viewer-step-note');
  return `pod ${podSteps} steps, overview ${overviewSteps}: "${said}"`;
}

function wholeTraceRequests() {
  return requests.filter((u) => u.pathname.endsWith('/data') && u.searchParams.get('tag') === 'trace_viewer' && !u.searchParams.get('size'));
}

async function rawTraceSize() {
  const run = 'profiler_hook/train/timeline-8';
  const estimate = await api('data', { run, tag: 'trace_viewer', size: 'estimate' });
  await page.goto(appUrl({ run, tool: 'trace_viewer@', trace_tab: 'summary' }));
  const el = page.locator('pf-tool-view > pf-trace-view');
  await el.locator('button[role="tab"]', { hasText: 'Summary' }).click();
  const links = el.locator('pf-trace-summary-view pf-trace-raw-links');
  await links.locator('a.open-raw').waitFor({ timeout: TIMEOUT_MS });
  const before = wholeTraceRequests().length;
  const pages = page.context().pages().length;
  await links.locator('a.open-raw').click();
  const dialog = links.locator('[role="dialog"]');
  await dialog.waitFor({ timeout: TIMEOUT_MS });
  const said = await text(dialog);
  check(said.includes(`${estimate.events} events`), `the question "${said}" does not give the server's ${estimate.events} events`);
  check(/The raw trace is (about )?[\d.]+ (B|KiB|MiB|GiB) of JSON/.test(said), `the question "${said}" names no size`);
  check(page.context().pages().length === pages, 'the raw trace opened before the user confirmed');
  check(wholeTraceRequests().length === before, 'the whole trace was requested before the user confirmed');
  await shot('raw-json-question');
  await dialog.locator('button', { hasText: 'Cancel' }).click();
  check((await dialog.count()) === 0, 'Cancel left the question open');
  const [download] = await Promise.all([page.waitForEvent('download'), links.locator('a.download-trace').click()]);
  const name = download.suggestedFilename();
  check(name.endsWith('.trace.json.gz'), `the download is named ${name}`);
  const trace = JSON.parse(gunzipSync(readFileSync(await download.path())).toString());
  check(trace.traceEvents.length > 0 && trace.traceEvents.every((e) => typeof e.ph === 'string'), 'the .json.gz is not a Chrome trace with a phase on every event');
  return `"${said}"; Cancel sends nothing; ${name} holds ${trace.traceEvents.length} events`;
}

async function traceHostNote() {
  const hosts = (await api('hosts', { run: TWO_HOSTS, tag: 'trace_viewer@' })).map((h) => h.hostname);
  check(hosts.length === 2, `expected two hosts in ${TWO_HOSTS}, found ${hosts}`);
  // Coming from a tool on all hosts, the trace viewer falls back to one host: it must say so.
  await page.goto(appUrl({ run: TWO_HOSTS, tool: 'overview_page' }));
  await page.locator('pf-tool-view').getByText(/over \d+ steps/).first().waitFor({ timeout: TIMEOUT_MS });
  await page.goto(appUrl({ run: TWO_HOSTS, tool: 'trace_viewer@', host: 'ALL_HOSTS' }));
  const note = page.locator('pf-tool-view > pf-trace-view pf-trace-host-note');
  await note.locator('.note').waitFor({ timeout: TIMEOUT_MS });
  const first = await text(note.locator('.note'));
  check(first.includes(`Host ${param('host')} (${hosts.indexOf(param('host')) + 1} of 2 hosts`), `the note "${first}" does not name the drawn host ${param('host')}`);
  await page.locator('pf-trace-timeline canvas').first().waitFor({ timeout: TIMEOUT_MS });
  await shot('trace-host-note');
  const other = hosts.find((h) => h !== param('host'));
  await note.locator('select').selectOption(other);
  await page.waitForFunction((h) => new URL(location.href).searchParams.get('host') === h, other, { timeout: TIMEOUT_MS });
  await note.getByText(`Host ${other} (${hosts.indexOf(other) + 1} of 2 hosts`).waitFor({ timeout: TIMEOUT_MS });
  await shot('trace-host-chosen');
  // One host: no note.
  await page.goto(appUrl({ run: 'jax_cpu_train/session_1', tool: 'trace_viewer@' }));
  await page.locator('pf-trace-timeline canvas').first().waitFor({ timeout: TIMEOUT_MS });
  check((await page.locator('pf-trace-host-note .note').count()) === 0, 'a one-host session shows the host note');
  return `"${first}"; choosing ${other} switches`;
}

async function allSteps() {
  const run = 'profiler_hook/train/all_steps';
  const tools = await api('run_tools', { run });
  check(tools.length === 1 && tools[0] === 'trace_viewer@', `${run} lists ${tools}, expected the trace viewer only`);
  const whole = await api('data', { run, tag: 'trace_viewer@', host: 'ALL_HOSTS', format: 'columnar', resolution: 400, max_events: 2000 });
  const steps = (await api('hosts', { run, tag: 'trace_viewer@' })).map((h) => h.hostname).filter((h) => h !== 'ALL_HOSTS');
  await page.goto(appUrl({ run, tool: 'trace_viewer@' }));
  const note = page.locator('pf-tool-view > pf-trace-view pf-trace-host-note .note');
  await note.waitFor({ timeout: TIMEOUT_MS });
  const said = await text(note);
  check(param('host') === 'ALL_HOSTS', `the combined run opened on host ${param('host')}, not on every step`);
  check(said.startsWith(`All ${steps.length} hosts drawn`), `the note "${said}" does not say every step is drawn`);
  await page.locator('pf-trace-timeline canvas').first().waitFor({ timeout: TIMEOUT_MS });
  const span = whole.fullTimespan[1] - whole.fullTimespan[0];
  check(span > 30, `the steps span ${span} ms: they were not put on one time line`);
  await page.waitForTimeout(500);
  await shot('all-steps');
  return `${steps.join(', ')} over ${span.toFixed(2)} ms; "${said}"`;
}

async function main() {
  const browser = await launchChromium();
  let failed = 0;
  try {
    page = await openPage(browser, base.origin, problems, { viewport: { width: 1366, height: 768 }, onRequest: (u) => requests.push(u) });
    watchConsole(page, problems, () => step);
    for (const [name, fn] of [
      ['graph viewer opens on the busiest program and its costliest op', graphViewerDefaults],
      ['memory viewer opens on the busiest program', memoryViewerDefault],
      ['pod viewer explains its step count', podStepNote],
      ['raw trace: size first, .json.gz download', rawTraceSize],
      ['trace viewer names its host of several', traceHostNote],
      ['ProfilerHook steps together (all_steps)', allSteps],
    ]) {
      step = name;
      try {
        results.push(`ok   ${step}: ${await fn()}`);
      } catch (error) {
        failed++;
        results.push(`FAIL ${step}: ${error?.message ?? error}`);
        await shot(`failure-${name.replace(/[^\w]+/g, '-')}`).catch(() => {});
      }
    }
  } finally {
    await browser.close();
  }
  report(results, failed, problems);
}

main().catch((error) => abort(error, step));
