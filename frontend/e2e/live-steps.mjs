// The live page's step list and "Capture next step", and "Download session", in real headless
// Chromium against a real JAX training loop served by live.tracing (docs/capture.md). Run by
// tests/web/test_frontend.py, which starts the loop and then checks the saved session:
//
//   PROFILE_E2E_LIVE_URL='http://127.0.0.1:PORT/?token=…' PROFILE_E2E_ARTIFACTS=/tmp/shots node e2e/live-steps.mjs
//
// Prints `captured <session>` when the step's session was saved and selected.
import { join } from 'node:path';
import { abort, check, launchChromium } from './browser.mjs';

const TIMEOUT_MS = Number(process.env.PROFILE_E2E_TIMEOUT_MS || 60000);
const LINK = process.env.PROFILE_E2E_LIVE_URL;
const ARTIFACTS = process.env.PROFILE_E2E_ARTIFACTS || '/tmp';
if (!LINK) abort('Set PROFILE_E2E_LIVE_URL to the live page link (with ?token=).');

async function main() {
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors = [];
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    await page.goto(LINK);
    const panel = page.locator('pf-live-steps');
    const summary = panel.locator('.summary-line', { hasText: /steps? run; last \d+ took/ });
    await summary.waitFor({ timeout: TIMEOUT_MS });
    const rows = panel.locator('tbody tr');
    check((await rows.count()) === 8, `expected the 8 newest steps, got ${await rows.count()}`);
    const first = Number(await rows.nth(0).locator('td').first().textContent());
    const second = Number(await rows.nth(1).locator('td').first().textContent());
    check(first > second, `steps not newest first: ${first}, ${second}`);
    console.log(`ok   listed: ${(await summary.textContent()).trim()}`);
    await page.screenshot({ path: join(ARTIFACTS, 'live-steps-list.png') });

    await panel.locator('button.capture-step').click();
    const saved = panel.locator('.capture-state', { hasText: /saved as session/ });
    await saved.waitFor({ timeout: TIMEOUT_MS });
    const text = (await saved.textContent()).trim();
    const session = text.match(/session (\S+)\.$/)[1];
    console.log(`ok   ${text}`);
    await panel.locator('button.open-captured').click();
    const runSelect = page.locator('pf-app pf-select-field[label="Run"] select');
    await page.waitForFunction(
      (s) => document.querySelector('pf-app')?.shadowRoot?.querySelector('pf-select-field[label="Run"]')?.value === s,
      session,
      { timeout: TIMEOUT_MS },
    );
    check((await runSelect.count()) >= 0, 'run selector missing');
    const download = page.locator('pf-app a.download');
    const href = await download.getAttribute('href');
    check(href.includes('session_export') && href.includes(encodeURIComponent(session)), `download link: ${href}`);
    const zip = await page.evaluate(async (url) => {
      const response = await fetch(url);
      const bytes = new Uint8Array(await response.arrayBuffer());
      return { status: response.status, type: response.headers.get('content-type'), magic: String.fromCharCode(bytes[0], bytes[1]), size: bytes.length };
    }, href);
    check(zip.status === 200 && zip.type === 'application/zip' && zip.magic === 'PK', `download: ${JSON.stringify(zip)}`);
    console.log(`ok   download: ${zip.size} bytes of zip`);
    await page.waitForTimeout(1500); // the selected session's first tool
    await page.screenshot({ path: join(ARTIFACTS, 'live-steps-captured.png') });
    check(errors.length === 0, `console errors: ${errors.join(' | ')}`);
    console.log(`captured ${session}`);
  } finally {
    await browser.close();
  }
}

main().catch((error) => abort(error));
