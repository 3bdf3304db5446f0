// Browser test of the canvas trace viewer in real headless Chromium (playwright-core + /usr/bin/chromium).
//
//   PROFILE_E2E_URL=http://127.0.0.1:8791/ PROFILE_E2E_ARTIFACTS=/tmp/shots node e2e/trace.e2e.mjs
//
// Opens `trace_viewer@` of the fixture with the most trace events (found through the API) and
// checks: the canvas draws; wheel and W/S zoom ask the backend for narrower windows; keys and
// drag pan; search jumps (URL window changes, details show the name); clicking an event shows its
// details; range selection counts events; the help overlay; a deep link reopens the same window;
// "show in TF stats" switches tools; the dark theme redraws. It measures frame times
// (requestAnimationFrame deltas and draw times) during a scripted pan. No request may leave the
// server's origin and the console stays clean. Runs under a strict CSP.
//
// Skips (exit 0, with a note) only when no run lists `trace_viewer@` in run_tools.
// Prints `N passed, M failed`; exit code 1 when anything failed.
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { enforceStrictCsp, guardOrigin, launchChromium } from './browser.mjs';

const BASE = process.env.PROFILE_E2E_URL;
const ARTIFACTS = process.env.PROFILE_E2E_ARTIFACTS || join(tmpdir(), 'profile-e2e-artifacts');
const TIMEOUT_MS = Number(process.env.PROFILE_E2E_TIMEOUT_MS || 60000);
const TOOL = 'trace_viewer@';

if (!BASE) {
  console.error('Set PROFILE_E2E_URL to the server root, e.g. http://127.0.0.1:8791/');
  console.error('0 passed, 1 failed');
  process.exit(1);
}
const base = new URL(BASE);
const pluginBase = new URL('data/plugin/profile/', base);
mkdirSync(ARTIFACTS, { recursive: true });

let passed = 0;
let failed = 0;
const problems = [];
/** Window requests the page made: {startMs, endMs, resolution} (whole-trace requests have no start). */
const windowRequests = [];
let page;

function assert(condition, message) {
  if (!condition) throw new Error(message);
}

async function check(name, body) {
  try {
    await body();
    passed++;
    console.log(`ok   ${name}`);
  } catch (error) {
    failed++;
    console.log(`FAIL ${name}: ${error?.message ?? error}`);
    await shot(`failure-${passed + failed}`).catch(() => {});
  }
}

async function shot(name) {
  await page.screenshot({ path: join(ARTIFACTS, `trace-${name}.png`) });
}

async function getJson(route, params = {}) {
  const url = new URL(route, pluginBase);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, String(v));
  const response = await fetch(url);
  assert(response.ok, `GET ${url.pathname}${url.search} answered ${response.status}`);
  return response.json();
}

/** The run (and host) with the most trace events among those listing trace_viewer@; null if none. */
async function pickTarget() {
  const runs = await getJson('runs');
  let best = null;
  for (const run of runs) {
    const tools = await getJson('run_tools', { run });
    if (!tools.includes(TOOL)) continue;
    const hosts = (await getJson('hosts', { run, tag: TOOL })).map((h) => h.hostname ?? h);
    const host = hosts[0] ?? '';
    const answer = await getJson('data', { run, tag: TOOL, ...(host ? { host } : {}), format: 'columnar', resolution: 400, max_events: 2000 });
    if (!best || answer.events > best.events) best = { run, host, tools, events: answer.events, overview: answer };
  }
  return best;
}

/** A name with at least two matches, preferring names of real items (not boxes). */
async function searchableName(target) {
  const { overview } = target;
  const counts = new Map();
  for (const row of overview.rows) {
    row.name.forEach((n, i) => {
      counts.set(n, (counts.get(n) ?? 0) + (row.merged[i] === 1 ? 1000 : 1));
    });
  }
  const names = [...counts.entries()].sort((a, b) => b[1] - a[1]).map(([n]) => overview.strings[n]).filter((s) => s && s.length >= 4);
  for (const name of names.slice(0, 10)) {
    const answer = await getJson('data', { run: target.run, tag: TOOL, ...(target.host ? { host: target.host } : {}), search: name });
    if (answer.total >= 2) return { name, total: answer.total };
  }
  return names.length ? { name: names[0], total: 1 } : null;
}

const timeline = () => page.locator('pf-trace-timeline');
const canvas = () => page.locator('pf-trace-timeline canvas');
const urlWindow = () => page.evaluate(() => {
  const q = new URLSearchParams(location.search);
  return { start: Number(q.get('start_ms')), end: Number(q.get('end_ms')), event: q.get('event') };
});
const span = (w) => w.endMs - w.startMs;

async function waitForWindowRequest(after, predicate, what) {
  const deadline = Date.now() + TIMEOUT_MS / 4;
  while (Date.now() < deadline) {
    const fresh = windowRequests.slice(after).filter((w) => w.startMs !== undefined);
    if (fresh.some(predicate)) return fresh.find(predicate);
    await page.waitForTimeout(50);
  }
  throw new Error(`no window request ${what} (sent: ${JSON.stringify(windowRequests.slice(after))})`);
}

async function modelSpan() {
  return timeline().evaluate((el) => ({ startMs: el.model.span.startMs, endMs: el.model.span.endMs }));
}

/** Distinct colours on a grid over the tracks area, and the share that is not the background. */
async function sampleCanvas() {
  return canvas().evaluate((c) => {
    const ctx = c.getContext('2d');
    const data = ctx.getImageData(0, 0, c.width, c.height).data;
    const colours = new Map();
    const left = Math.floor(c.width * 0.2);
    for (let y = Math.floor(c.height * 0.1); y < c.height; y += 7) {
      for (let x = left; x < c.width; x += 11) {
        const i = (y * c.width + x) * 4;
        const key = (data[i] << 16) | (data[i + 1] << 8) | data[i + 2];
        colours.set(key, (colours.get(key) ?? 0) + 1);
      }
    }
    const total = [...colours.values()].reduce((a, b) => a + b, 0);
    const [, bgCount] = [...colours.entries()].sort((a, b) => b[1] - a[1])[0];
    // The ruler's top-left corner is always bare surface: the theme's colour.
    const corner = ctx.getImageData(4, 4, 1, 1).data;
    return { distinct: colours.size, nonBackground: 1 - bgCount / total, background: [corner[0], corner[1], corner[2]] };
  });
}

/** requestAnimationFrame deltas while `action` runs, plus the timeline's own draw times. */
async function measureFrames(action) {
  await page.evaluate(() => {
    window.__frames = [];
    let last = performance.now();
    const tick = (now) => {
      window.__frames.push(now - last);
      last = now;
      if (window.__frames.length < 100000 && !window.__stopFrames) requestAnimationFrame(tick);
    };
    window.__stopFrames = false;
    requestAnimationFrame(tick);
  });
  await timeline().evaluate((el) => {
    el.drawTimes.length = 0;
  });
  await action();
  const frames = await page.evaluate(() => {
    window.__stopFrames = true;
    return window.__frames.slice(1);
  });
  const draws = await timeline().evaluate((el) => el.drawTimes.slice());
  const pct = (values, p) => {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN;
  };
  return {
    frames: frames.length,
    medianFrameMs: pct(frames, 50),
    p95FrameMs: pct(frames, 95),
    maxFrameMs: Math.max(...frames),
    draws: draws.length,
    medianDrawMs: pct(draws, 50),
    p95DrawMs: pct(draws, 95),
  };
}

async function run() {
  const target = await pickTarget();
  if (!target) {
    console.log(`note: no run lists ${TOOL} in run_tools yet; the trace viewer browser test is skipped`);
    console.log('0 passed, 0 failed');
    return;
  }
  console.log(`target: run=${target.run} host=${target.host || '(none)'} events=${target.events}`);
  const found = await searchableName(target);

  const browser = await launchChromium();
  try {
    // Device pixel ratio 1: without a GPU, compositing a 2× canvas dominates frame times; the
    // HiDPI check switches to 2× through the DevTools protocol.
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, deviceScaleFactor: 1 });
    await enforceStrictCsp(context, base.origin);
    page = await context.newPage();
    guardOrigin(page, base.origin, problems, (url) => {
      const q = url.searchParams;
      if (url.pathname.endsWith('/data') && q.get('tag') === TOOL && q.has('resolution')) {
        windowRequests.push({
          startMs: q.has('start_time_ms') ? Number(q.get('start_time_ms')) : undefined,
          endMs: q.has('end_time_ms') ? Number(q.get('end_time_ms')) : undefined,
          resolution: Number(q.get('resolution')),
          pids: q.get('pids'),
        });
      }
    });
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console error: ${message.text()} ${message.location()?.url ?? ''}`);
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));

    const q = new URLSearchParams({ run: target.run, tool: TOOL, ...(target.host ? { host: target.host } : {}) });
    let full;

    await check('the timeline opens and the canvas draws events', async () => {
      await page.goto(`${base.href}?${q}`);
      await canvas().waitFor({ timeout: TIMEOUT_MS });
      await page.waitForFunction(() => {
        const el = document.querySelector('pf-app')?.shadowRoot?.querySelector('pf-tool-view')?.shadowRoot?.querySelector('pf-trace-view')?.shadowRoot?.querySelector('pf-trace-timeline');
        return el?.model?.phase === 'ready' && el.model.layout.tracks.length > 0;
      }, null, { timeout: TIMEOUT_MS });
      await page.waitForTimeout(300);
      full = await timeline().evaluate((el) => ({ ...el.model.full }));
      const pixels = await sampleCanvas();
      assert(pixels.distinct >= 4 && pixels.nonBackground > 0.02, `canvas looks empty: ${JSON.stringify(pixels)}`);
      const first = windowRequests[0];
      assert(first && first.resolution > 500 && first.resolution < 1400, `first request resolution ${first?.resolution} is not the canvas width`);
      await shot('01-opened');
      const listed = await timeline().evaluate((el) => el.model.windows().primary?.flows.length ?? 0);
      const drawnAtOpen = await timeline().evaluate((el) => el.flowsDrawn);
      assert(drawnAtOpen === 0, `${drawnAtOpen} of ${listed} flow arrows drawn over the whole trace with nothing selected`);
    });

    await check('HiDPI: the canvas bitmap follows devicePixelRatio', async () => {
      const cdp = await page.context().newCDPSession(page);
      await cdp.send('Emulation.setDeviceMetricsOverride', { width: 1400, height: 900, deviceScaleFactor: 2, mobile: false });
      await page.waitForFunction(() => devicePixelRatio === 2);
      // Emulation fires no media-query or resize event here; the next frame notices the ratio.
      const at = await canvas().boundingBox();
      await page.mouse.move(at.x + at.width / 2, at.y + 100);
      await page.waitForTimeout(300);
      const [bitmap, css] = await canvas().evaluate((c) => [c.width, c.getBoundingClientRect().width]);
      assert(Math.abs(bitmap - 2 * Math.floor(css - 2)) <= 6, `canvas bitmap ${bitmap} px for ${css} CSS px at 2×`);
      assert((await sampleCanvas()).nonBackground > 0.02, 'nothing drawn at 2×');
      await shot('01b-hidpi');
      await cdp.send('Emulation.clearDeviceMetricsOverride');
      await page.waitForFunction(() => devicePixelRatio === 1);
      await page.mouse.move(at.x + at.width / 2, at.y + 120);
      await page.waitForTimeout(200);
      assert((await canvas().evaluate((c) => c.width)) < bitmap, 'canvas did not return to 1×');
    });

    const box = await canvas().boundingBox();
    const centre = { x: box.x + 200 + (box.width - 200) / 2, y: box.y + box.height / 3 };

    await check('ctrl+wheel zooms in at the cursor and asks for a narrower window', async () => {
      const before = await modelSpan();
      const sent = windowRequests.length;
      await page.mouse.move(centre.x, centre.y);
      await page.keyboard.down('Control');
      for (let i = 0; i < 5; i++) await page.mouse.wheel(0, -120);
      await page.keyboard.up('Control');
      const after = await modelSpan();
      assert(span(after) < span(before) * 0.8, `span did not shrink: ${span(before)} → ${span(after)}`);
      await waitForWindowRequest(sent, (w) => span(w) < span(before) * 0.8, 'narrower than before the wheel');
    });

    await check('W zooms in and S zooms out, each asking for a new window', async () => {
      await page.mouse.move(centre.x, centre.y);
      const before = await modelSpan();
      const sent = windowRequests.length;
      await page.keyboard.down('w');
      await page.waitForTimeout(500);
      await page.keyboard.up('w');
      const zoomed = await modelSpan();
      assert(span(zoomed) < span(before) * 0.7, `W did not zoom in: ${span(before)} → ${span(zoomed)}`);
      await waitForWindowRequest(sent, (w) => span(w) < span(before) * 0.7, 'narrower after W');
      // Zooming back out may be served from the cache of recent windows: no request is required.
      await page.keyboard.down('s');
      await page.waitForTimeout(300);
      await page.keyboard.up('s');
      const out = await modelSpan();
      assert(span(out) > span(zoomed) * 1.3, `S did not zoom out: ${span(zoomed)} → ${span(out)}`);
      await shot('02-zoomed');
    });

    await check('A/D and arrow keys pan; dragging pans; the URL follows', async () => {
      const before = await modelSpan();
      await page.keyboard.down('d');
      await page.waitForTimeout(300);
      await page.keyboard.up('d');
      const right = await modelSpan();
      assert(right.startMs > before.startMs, `D did not pan right: ${before.startMs} → ${right.startMs}`);
      await page.keyboard.down('ArrowLeft');
      await page.waitForTimeout(150);
      await page.keyboard.up('ArrowLeft');
      const left = await modelSpan();
      assert(left.startMs < right.startMs, 'ArrowLeft did not pan left');
      await page.mouse.move(centre.x, centre.y);
      await page.mouse.down();
      await page.mouse.move(centre.x - 150, centre.y, { steps: 5 });
      await page.mouse.up();
      const dragged = await modelSpan();
      assert(dragged.startMs > left.startMs, `dragging left did not move the view later: ${left.startMs} → ${dragged.startMs}`);
      await page.waitForFunction((s) => Math.abs(Number(new URLSearchParams(location.search).get('start_ms')) - s) < 1e-5, dragged.startMs, { timeout: 5000 });
    });

    await check('frame times while panning stay smooth (largest fixture)', async () => {
      await page.keyboard.press('0');
      await page.mouse.move(centre.x, centre.y);
      await page.keyboard.down('w');
      await page.waitForTimeout(250);
      await page.keyboard.up('w');
      await page.waitForTimeout(400);
      const stats = await measureFrames(async () => {
        await page.keyboard.down('d');
        await page.waitForTimeout(1200);
        await page.keyboard.up('d');
        await page.mouse.move(centre.x, centre.y);
        await page.mouse.down();
        for (let i = 0; i < 40; i++) await page.mouse.move(centre.x + 8 * i, centre.y + (i % 2));
        await page.mouse.up();
      });
      console.log(`frames: ${JSON.stringify(Object.fromEntries(Object.entries(stats).map(([k, v]) => [k, Math.round(v * 100) / 100])))}`);
      assert(stats.frames > 30, `only ${stats.frames} frames`);
      assert(stats.medianFrameMs < 34, `median frame ${stats.medianFrameMs} ms`);
      assert(stats.p95DrawMs < 16, `95th percentile draw ${stats.p95DrawMs} ms`);
    });

    await check('search jumps to a match: URL window changes, details show the name', async () => {
      assert(found, 'no searchable name in the data');
      await page.keyboard.press('0');
      await page.waitForTimeout(300);
      const before = await urlWindow();
      const input = page.locator('pf-trace-view input[type="search"]');
      await input.fill(found.name);
      await input.press('Enter');
      const heading = page.locator('pf-trace-details h3.event-name');
      await heading.waitFor({ timeout: TIMEOUT_MS });
      await page.waitForFunction((n) => {
        const view = document.querySelector('pf-app').shadowRoot.querySelector('pf-tool-view').shadowRoot.querySelector('pf-trace-view');
        return view.shadowRoot.querySelector('pf-trace-details')?.shadowRoot?.querySelector('h3')?.textContent === n;
      }, found.name, { timeout: TIMEOUT_MS });
      await page.waitForFunction((b) => {
        const q = new URLSearchParams(location.search);
        return q.get('event') && Number(q.get('end_ms')) - Number(q.get('start_ms')) < b.end - b.start;
      }, before, { timeout: 5000 });
      const count = await page.locator('pf-trace-view .match-count').textContent();
      assert(new RegExp(`^1 of ${found.total}`).test(count.trim()), `match counter reads "${count}"`);
      const first = await urlWindow();
      await input.press('Enter');
      await page.waitForFunction((e) => new URLSearchParams(location.search).get('event') !== e, first.event, { timeout: 5000 });
      assert((await page.locator('pf-trace-view .match-count').textContent()).trim().startsWith('2 of'), 'Enter did not step to match 2');
      await input.press('Shift+Enter');
      await page.waitForFunction((e) => new URLSearchParams(location.search).get('event') === e, first.event, { timeout: 5000 });
      await shot('03-search');
    });

    await check('clicking an event shows its details', async () => {
      await page.locator('pf-trace-timeline canvas').focus();
      await page.keyboard.press('Escape');
      const pick = await timeline().evaluate((el) => {
        const { primary } = el.model.windows();
        const view = el.model.viewport;
        const k = view.widthPx / (view.endMs - view.startMs);
        for (const track of el.model.layout.tracks) {
          if (track.y - el.model.scrollTop > el.model.heightPx - 20) break;
          const data = primary?.tracks.get(track.key);
          if (!data) continue;
          for (let i = 0; i < data.event.length; i++) {
            const x0 = Math.max(data.beginMs[i], view.startMs);
            const x1 = Math.min(data.endMs[i], view.endMs);
            if (data.merged[i] === 1 && (x1 - x0) * k > 12) {
              const at = el.locateEvent(data.event[i]);
              if (at) return { event: data.event[i], name: primary.strings[data.name[i]], x: at.x + Math.min(at.width / 2, 6), y: at.y + at.height / 2 };
            }
          }
        }
        return null;
      });
      assert(pick, 'no event wide enough to click in view');
      await page.mouse.click(pick.x, pick.y);
      await page.waitForFunction((e) => new URLSearchParams(location.search).get('event') === String(e), pick.event, { timeout: 5000 });
      const details = page.locator('pf-trace-details');
      await page.waitForFunction(() => {
        const view = document.querySelector('pf-app').shadowRoot.querySelector('pf-tool-view').shadowRoot.querySelector('pf-trace-view');
        const d = view.shadowRoot.querySelector('pf-trace-details');
        return d && d.selection?.details;
      }, null, { timeout: TIMEOUT_MS });
      const text = (await details.evaluate((d) => d.shadowRoot.textContent)).replace(/\s+/g, ' ');
      assert(text.includes(pick.name), `details do not name "${pick.name}": ${text.slice(0, 200)}`);
      assert(/Start.*Duration/.test(text), 'details lack start and duration');
      const api = await getJson('data', { run: target.run, tag: TOOL, ...(target.host ? { host: target.host } : {}), details: pick.event });
      assert(api.name === pick.name, `details API names ${api.name}, the window ${pick.name}`);
      for (const key of Object.keys(api.args ?? {}).slice(0, 3)) assert(text.includes(key), `argument ${key} not shown`);
      await shot('04-details');
    });

    await check('a flow link in the details jumps to the other event; arrows are drawn', async () => {
      const flows = target.overview.flows;
      if (!flows || !flows.from_event?.length) {
        console.log('     (no flows in this trace; skipped)');
        return;
      }
      const from = flows.from_event[0];
      const to = flows.to_event[0];
      await timeline().evaluate((el, e) => el.model.selectEvent(e, { reveal: true }), from);
      const link = page.locator('pf-trace-details button.flow-link').first();
      await link.waitFor({ timeout: TIMEOUT_MS });
      await page.waitForTimeout(300);
      const arrows = await timeline().evaluate((el) => el.model.windows().primary?.flows.length ?? 0);
      assert(arrows > 0, 'the window around a flow event lists no arrows');
      // Flows: only the selected event's by default; "All flows" draws every arrow in view.
      const drawn = () => timeline().evaluate((el) => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => done(el.flowsDrawn)))));
      const mine = await drawn();
      assert(mine > 0 && mine < arrows + 1, `the selected event's flows: ${mine} arrows drawn of ${arrows}`);
      await shot('04b-flow');
      const toggle = page.locator('pf-trace-view label.flows input');
      await toggle.check();
      const all = await drawn();
      assert(all >= mine, `All flows draws ${all} arrows, fewer than the selection's ${mine}`);
      await toggle.uncheck();
      await link.click();
      await page.waitForFunction((e) => new URLSearchParams(location.search).get('event') !== String(e), from, { timeout: 5000 });
      const now = Number((await urlWindow()).event);
      const details = await getJson('data', { run: target.run, tag: TOOL, ...(target.host ? { host: target.host } : {}), details: from });
      const linked = details.flows.flatMap((f) => f.events.map((e) => e.event));
      assert(linked.includes(now), `jumped to event ${now}, not one of the flow's events ${linked.slice(0, 10)} (arrow to ${to})`);
    });

    await check('M marks the selection as a range; shift+drag selects a range with statistics', async () => {
      await page.locator('pf-trace-timeline canvas').focus();
      await page.keyboard.press('m');
      const stats = page.locator('pf-trace-view section.range-stats');
      await stats.waitFor({ timeout: 5000 });
      await page.keyboard.press('Escape');
      await stats.waitFor({ state: 'detached', timeout: 5000 });
      await page.keyboard.press('0');
      await page.keyboard.down('Shift');
      await page.mouse.move(box.x + 260, box.y + 60);
      await page.mouse.down();
      await page.mouse.move(box.x + box.width - 60, box.y + box.height - 40, { steps: 6 });
      await page.mouse.up();
      await page.keyboard.up('Shift');
      await stats.waitFor({ timeout: 5000 });
      const text = (await stats.textContent()).replace(/\s+/g, ' ');
      const count = Number(/(\d+) events/.exec(text)?.[1] ?? 0);
      assert(count > 0, `range statistics count nothing: ${text.slice(0, 200)}`);
      assert((await stats.locator('tbody tr').count()) > 0, 'no per-name rows');
      await shot('05-range');
      await page.keyboard.press('f');
      const fitted = await modelSpan();
      assert(span(fitted) < full.endMs - full.startMs, 'F did not fit the range');
      await page.keyboard.press('Escape');
    });

    await check('? opens the keyboard help and Esc closes it', async () => {
      await page.locator('pf-trace-timeline canvas').focus();
      await page.keyboard.press('?');
      const help = page.locator('pf-trace-view .help');
      await help.waitFor({ timeout: 5000 });
      assert((await help.locator('tr').count()) >= 8, 'help lists too few keys');
      await shot('06-help');
      await page.keyboard.press('Escape');
      await help.waitFor({ state: 'detached', timeout: 5000 });
    });

    await check('a shared link reopens the same window and event', async () => {
      await page.keyboard.down('w');
      await page.waitForTimeout(300);
      await page.keyboard.up('w');
      await page.waitForTimeout(400);
      const url = page.url();
      const before = await urlWindow();
      assert(before.start > 0 || before.end > 0, 'the URL holds no window');
      await page.goto(url);
      await page.waitForFunction(() => {
        const el = document.querySelector('pf-app')?.shadowRoot?.querySelector('pf-tool-view')?.shadowRoot?.querySelector('pf-trace-view')?.shadowRoot?.querySelector('pf-trace-timeline');
        return el?.model?.phase === 'ready';
      }, null, { timeout: TIMEOUT_MS });
      const span2 = await modelSpan();
      assert(Math.abs(span2.startMs - before.start) < 1e-5 && Math.abs(span2.endMs - before.end) < 1e-5, `reopened at ${JSON.stringify(span2)}, link had ${JSON.stringify(before)}`);
      if (before.event) {
        await page.locator('pf-trace-details h3').waitFor({ timeout: TIMEOUT_MS });
      }
      await page.waitForTimeout(300);
      assert((await sampleCanvas()).nonBackground > 0.005, 'nothing drawn after reopening');
    });

    await check('dark theme redraws with a dark background', async () => {
      await page.emulateMedia({ colorScheme: 'dark' });
      await page.waitForTimeout(300);
      const { background } = await sampleCanvas();
      assert(background.reduce((a, b) => a + b, 0) < 3 * 80, `background is not dark: ${background}`);
      await shot('07-dark');
      await page.emulateMedia({ colorScheme: 'light' });
    });

    await check('"Show in TF stats" switches to the op statistics with the name as filter', async () => {
      const opTool = target.tools.find((t) => /^(framework_op_stats|tensorflow_stats)/.test(t));
      if (!opTool) {
        console.log('     (no op statistics tool in this run; skipped)');
        return;
      }
      const link = page.locator('pf-trace-details button.op-stats');
      await link.waitFor({ timeout: TIMEOUT_MS });
      const name = await page.locator('pf-trace-details h3').textContent();
      await link.click();
      await page.waitForFunction(([t, n]) => {
        const p = new URLSearchParams(location.search);
        return p.get('tool') === t && p.get('op_filter') === n && !p.has('start_ms');
      }, [opTool, name], { timeout: TIMEOUT_MS });
      // The filter that applies is in the filter boxes, and the table is not emptied silently.
      const view = page.locator('pf-op-stats-view');
      await view.locator('pf-data-table').waitFor({ timeout: TIMEOUT_MS * 2 });
      const boxes = await view.locator('.filters input[type="search"]').evaluateAll((inputs) => inputs.map((i) => i.value));
      assert(boxes.some((v) => v && name.includes(v)), `filter boxes ${JSON.stringify(boxes)} do not show the filter for "${name}"`);
      const count = await view.locator('pf-data-table .count').textContent();
      const [shown, total = shown] = count.match(/\d+/g).map(Number);
      if (shown === 0) {
        await view.locator('button.clear-filters').click();
        const after = (await view.locator('pf-data-table .count').textContent()).match(/\d+/g).map(Number);
        assert(after[0] === total, `Clear filters shows ${after[0]} of ${total}`);
      }
      console.log(`     "${name}" → filter ${JSON.stringify(boxes)}, ${shown} of ${total} operations`);
      await page.goBack();
      await page.waitForFunction((t) => new URLSearchParams(location.search).get('tool') === t, TOOL, { timeout: TIMEOUT_MS });
    });

    await check('the timeline fills the window at 1366x768 (issue 28, item 10)', async () => {
      const before = page.viewportSize();
      await page.setViewportSize({ width: 1366, height: 768 });
      try {
        await page.waitForFunction(() => {
          const el = document.querySelector('pf-app')?.shadowRoot?.querySelector('pf-tool-view')?.shadowRoot
            ?.querySelector('pf-trace-view')?.shadowRoot?.querySelector('pf-trace-timeline');
          const box = el?.getBoundingClientRect();
          return box && box.height > 0 && Math.abs(window.innerHeight - box.bottom) <= 24;
        }, null, { timeout: 5000 }).catch(() => {});
        const box = await timeline().boundingBox();
        const gap = 768 - (box.y + box.height);
        assert(gap >= 0 && gap <= 24, `the timeline ends ${gap.toFixed(0)} px above the window's bottom (${box.height.toFixed(0)} px tall)`);
        await page.screenshot({ path: join(ARTIFACTS, 'trace-1366x768.png') });
      } finally {
        await page.setViewportSize(before);
      }
    });

    await check('trace_viewer opens on the Summary tab; its Timeline tab draws', async () => {
      if (!target.tools.includes('trace_viewer')) {
        console.log('     (no trace_viewer tool in this run; skipped)');
        return;
      }
      const qs = new URLSearchParams({ run: target.run, tool: 'trace_viewer', ...(target.host ? { host: target.host } : {}) });
      await page.goto(`${base.href}?${qs}`);
      await page.locator('pf-trace-summary-view ul.stats').waitFor({ timeout: TIMEOUT_MS * 2 });
      await page.locator('pf-trace-view .tabs button', { hasText: 'Timeline' }).click();
      await page.waitForFunction(() => new URLSearchParams(location.search).get('trace_tab') === 'timeline', null, { timeout: 5000 });
      await page.waitForFunction(() => {
        const el = document.querySelector('pf-app')?.shadowRoot?.querySelector('pf-tool-view')?.shadowRoot?.querySelector('pf-trace-view')?.shadowRoot?.querySelector('pf-trace-timeline');
        return el?.model?.phase === 'ready';
      }, null, { timeout: TIMEOUT_MS });
      await page.waitForTimeout(300);
      assert((await sampleCanvas()).nonBackground > 0.02, 'the Timeline tab of trace_viewer draws nothing');
      await shot('08-trace-viewer-timeline-tab');
    });

    await check('page health: same-origin requests only, clean console', async () => {
      assert(problems.length === 0, problems.join('\n'));
    });
  } finally {
    await browser.close();
  }
  console.log(`window requests: ${windowRequests.length}; screenshots in ${ARTIFACTS}`);
  console.log(`${passed} passed, ${failed} failed`);
  if (failed) process.exitCode = 1;
}

run().catch((error) => {
  console.error(`e2e FAILED: ${error?.stack ?? error}`);
  console.error(`${passed} passed, ${failed + 1} failed`);
  process.exit(1);
});
