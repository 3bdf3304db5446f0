// The Capture dialog's Cancel button against a real server and a profiler server that hangs,
// in real headless Chromium (issue 24, item 5; docs/security.md "Capture"). Run by
// tests/web/test_frontend.py, which then checks that the profiler saw its call cancelled and
// that nothing reached the logdir:
//
//   PROFILE_E2E_URL=http://127.0.0.1:PORT/ PROFILE_HANGING_PROFILER=127.0.0.1:GRPC_PORT node e2e/capture-cancel.mjs
//
// The dialog starts a 10-minute capture, shows the countdown and a Cancel button; Cancel stops
// it within seconds, the dialog says so, and Capture can be pressed again.
import { abort, check, launchChromium } from './browser.mjs';

const TIMEOUT_MS = Number(process.env.PROFILE_E2E_TIMEOUT_MS || 60000);
const target = process.env.PROFILE_E2E_URL;
const profiler = process.env.PROFILE_HANGING_PROFILER;
if (!target || !profiler) abort('Set PROFILE_E2E_URL (the server) and PROFILE_HANGING_PROFILER (host:port).');

async function main() {
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    await page.goto(target);
    await page.locator('pf-app header button.primary').click({ timeout: TIMEOUT_MS });
    await page.locator('pf-capture-dialog #service-addr').fill(profiler);
    await page.locator('pf-capture-dialog #duration').fill('600000');
    await page.locator('pf-capture-dialog button[type="submit"]').click();
    const cancel = page.locator('pf-capture-dialog button.cancel');
    await cancel.waitFor({ timeout: TIMEOUT_MS });
    const running = page.locator('pf-capture-dialog .status', { hasText: /s left|Tracing|Waiting/ });
    await running.waitFor({ timeout: TIMEOUT_MS });
    console.log(`ok   running: ${(await running.textContent()).trim()}`);
    const started = Date.now();
    await cancel.click();
    const cancelled = page.locator('pf-capture-dialog .status.cancelled');
    await cancelled.waitFor({ timeout: TIMEOUT_MS });
    const elapsed = Date.now() - started;
    check(elapsed < 10000, `cancelling took ${elapsed} ms`);
    const shown = (await cancelled.textContent()).trim();
    check(/cancelled/i.test(shown) && /nothing was written/.test(shown), `the dialog said: ${shown}`);
    check((await cancel.count()) === 0, 'the Cancel button is still shown');
    check(await page.locator('pf-capture-dialog button[type="submit"]').isEnabled(), 'Capture stays disabled');
    console.log(`ok   cancelled in ${elapsed} ms: ${shown}`);
  } finally {
    await browser.close();
  }
}

main().catch((error) => abort(error));
