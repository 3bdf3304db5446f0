// Browser test of the model view and the FLOP columns it fills, in real headless Chromium.
//
//   PROFILE_E2E_URL=http://127.0.0.1:8791/ PROFILE_E2E_ARTIFACTS=/tmp/shots node e2e/model.e2e.mjs
//
// The ProfilerHook run: the summary says 31,504 trainable parameters, the variables table lists
// the server's rows (conv1/w 3x3x1x16 among them), its CSV equals data_csv. The JAX CPU run: the
// largest program's parameters, the framework-op FLOP table drawn, and the HLO stats page showing
// a non-zero Model GFLOP/s for the dot. Fails on requests to other origins, console errors, page
// errors or CSP violations. Screenshots land in PROFILE_E2E_ARTIFACTS (model-*.png).
import { readFileSync } from 'node:fs';
import { check } from './browser.mjs';
import { e2eSuite } from './harness.mjs';

const suite = e2eSuite('model');
const { api, appUrl, shot } = suite;
const TIMEOUT_MS = suite.timeoutMs;
let page;

async function modelPage(run) {
  await page.goto(appUrl({ run, tool: 'model_view' }));
  const el = page.locator('pf-tool-view > pf-model-view');
  await el.waitFor({ timeout: TIMEOUT_MS });
  const summary = el.locator('section[aria-label="Model summary"]');
  await summary.waitFor({ timeout: TIMEOUT_MS });
  await el.locator('section[aria-label="Parameters"] pf-data-table tbody tr').first().waitFor({ timeout: TIMEOUT_MS });
  return { el, summary: (await summary.textContent()).replace(/\s+/g, ' ') };
}

async function tensorflowGraph(run) {
  const { el, summary } = await modelPage(run);
  check(summary.includes('Trainable parameters') && summary.includes('31,504'), `summary "${summary}" lacks 31,504 trainable parameters`);
  const [params] = await api('data', { run, tag: 'model_view' });
  const table = el.locator('section[aria-label="Parameters"] pf-data-table');
  const shown = (await table.locator('tbody').textContent()).replace(/\s+/g, ' ');
  check(shown.includes('conv1/w') && shown.includes('3x3x1x16'), 'the parameters table lacks conv1/w 3x3x1x16');
  const count = (await table.locator('.count').textContent()).replace(/\s+/g, ' ');
  check(count.includes(String(params.rows.length)), `row count "${count}" is not ${params.rows.length}`);
  const [download] = await Promise.all([page.waitForEvent('download', { timeout: TIMEOUT_MS }), table.locator('a.export').click()]);
  const file = readFileSync(await download.path(), 'utf8');
  check(file === (await api('data_csv', { run, tag: 'model_view', table: 0 }, 'text')), 'downloaded CSV differs from data_csv');
  await shot(`tensorflow-${run}`);
  return `${params.rows.length} variables, 31,504 trainable, CSV = data_csv`;
}

async function jaxPrograms(run) {
  const { el, summary } = await modelPage(run);
  const [params, , frameworkOps] = await api('data', { run, tag: 'model_view' });
  check(summary.includes(params.p.largest_program), `summary "${summary}" does not name ${params.p.largest_program}`);
  const flops = el.locator('section[aria-label="FLOPs per framework op"] pf-data-table tbody tr');
  await flops.first().waitFor({ timeout: TIMEOUT_MS });
  check(frameworkOps.rows.length > 0 && frameworkOps.rows[0].c[7].v > 0, 'the framework-op table has no FLOPs');
  await shot(`jax-${run}`);
  return `${params.p.largest_program}: ${params.p.largest_program_parameters} numbers; top framework op ${frameworkOps.rows[0].c[3].v}`;
}

async function hloFlopColumn(run) {
  await page.goto(appUrl({ run, tool: 'hlo_stats' }));
  const table = page.locator('pf-tool-view > pf-hlo-stats-view pf-data-table');
  await table.locator('tbody tr').first().waitFor({ timeout: TIMEOUT_MS });
  const header = (await table.locator('thead').textContent()).replace(/\s+/g, ' ');
  check(header.includes('Model GFLOP/s'), `the HLO stats table does not show Model GFLOP/s ("${header}")`);
  const data = await api('data', { run, tag: 'hlo_stats' });
  const column = data.cols.findIndex((c) => c.id === 'model_flop_rate');
  const nonZero = data.rows.filter((r) => r.c[column].v > 0).length;
  check(nonZero > 0, 'every Model GFLOP/s is 0');
  await shot(`hlo-stats-flops-${run}`);
  return `${nonZero} of ${data.rows.length} ops with a FLOP rate`;
}

suite.run(async (opened) => {
  page = opened;
  const runs = await api('runs');
  const hook = runs.find((r) => r.startsWith('profiler_hook'));
  const jax = runs.find((r) => r.startsWith('jax_cpu_train'));
  check(hook && jax, `expected the profiler_hook and jax_cpu_train runs, found ${runs}`);
  return [
    [`TensorFlow graph ${hook}`, tensorflowGraph, hook],
    [`JAX programs ${jax}`, jaxPrograms, jax],
    [`HLO stats FLOP column ${jax}`, hloFlopColumn, jax],
  ];
});
