/**
 * The selection in the address the user sees, also inside TensorBoard.
 *
 * Standalone, the page's own query string holds the selection (`state.ts`, `view-params.ts`).
 * Inside TensorBoard's Profile tab the app runs in an iframe that TensorBoard re-creates on every
 * reload (on `plugin_entry.html`, which we navigate to `index.html` with no query), so the
 * iframe's own query is lost. TensorBoard keeps per-plugin state in its own hash as
 * `#profile&p.profile.<key>=<value>` (the prefix its plugin API reads with GetURLPluginData, and
 * keeps when it rewrites the hash), so:
 *
 * - every time the app rewrites its query, the same parameters are mirrored there (with
 *   `history.replaceState` on TensorBoard's window: no history entry, no reload);
 * - when the app starts with an empty query inside TensorBoard, it takes them back from there.
 *
 * Values from the hash are only ever put into a URLSearchParams (never into markup); the shell
 * checks each one against the lists the server offers and says when one is not found.
 *
 *   restoreFromHost(window);   // before the shell reads the URL
 *   mirrorToHost(window);      // after each change (installHostMirror does it for every change)
 */

export const HOST_PREFIX = 'p.profile.';
/** Never mirrored: the live page's access token (takeAccessToken removes it from the address). */
const PRIVATE_KEYS = new Set(['token']);
/** Cap on what we copy from the host's hash: a hostile link cannot make the app read megabytes. */
const MAX_VALUE_CHARS = 4096;

type Win = Pick<Window, 'location' | 'history' | 'parent'>;

/** TensorBoard's window when this page is its plugin iframe (same origin), else null. */
export function tensorBoardWindow(win: Win): Win | null {
  try {
    const parent = win.parent as Win | null;
    if (!parent || parent === win) return null;
    if (parent.location.origin !== win.location.origin) return null;
    // A page of ours inside another page of ours (a test harness) is not TensorBoard.
    if (parent.location.pathname.includes('/data/plugin/profile/')) return null;
    return parent;
  } catch {
    return null; // another origin: its location cannot be read
  }
}

/** TensorBoard's hash split as it splits it: `tab&key=value&…` (keys and values URI-encoded). */
function hashEntries(hash: string): { tab: string | null; pairs: [string, string][] } {
  let tab: string | null = null;
  const pairs: [string, string][] = [];
  for (const part of hash.replace(/^#/, '').split('&')) {
    if (!part) continue;
    const bits = part.split('=');
    try {
      if (bits.length === 1) tab = decodeURIComponent(bits[0]);
      else if (bits.length === 2) pairs.push([decodeURIComponent(bits[0]), decodeURIComponent(bits[1])]);
    } catch {
      // A malformed escape: TensorBoard would fail on it too; skip the entry.
    }
  }
  return { tab, pairs };
}

/** The query (`?run=…`) the host's hash keeps for us, '' when none. */
export function searchFromHash(hash: string): string {
  const params = new URLSearchParams();
  for (const [key, value] of hashEntries(hash).pairs) {
    if (!key.startsWith(HOST_PREFIX)) continue;
    const name = key.slice(HOST_PREFIX.length);
    if (!name || PRIVATE_KEYS.has(name) || value.length > MAX_VALUE_CHARS) continue;
    params.set(name, value);
  }
  const text = params.toString();
  return text ? '?' + text : '';
}

/** `hash` with our entries replaced by the parameters of `search`; TensorBoard's own kept in place. */
export function hashWithSearch(hash: string, search: string): string {
  const { tab, pairs } = hashEntries(hash);
  const kept = pairs.filter(([key]) => !key.startsWith(HOST_PREFIX));
  for (const [name, value] of new URLSearchParams(search)) {
    if (!PRIVATE_KEYS.has(name)) kept.push([HOST_PREFIX + name, value]);
  }
  const parts = tab !== null ? [encodeURIComponent(tab)] : [];
  for (const [key, value] of kept) parts.push(encodeURIComponent(key) + '=' + encodeURIComponent(value));
  return parts.length ? '#' + parts.join('&') : '';
}

/** Inside TensorBoard with an empty query: take the selection back from TensorBoard's hash. */
export function restoreFromHost(win: Win): void {
  const host = tensorBoardWindow(win);
  if (!host || win.location.search) return;
  const search = searchFromHash(host.location.hash);
  if (search) win.history.replaceState(win.history.state, '', win.location.pathname + search + win.location.hash);
}

/** Writes this page's query into TensorBoard's hash (nothing when not inside TensorBoard). */
export function mirrorToHost(win: Win): void {
  const host = tensorBoardWindow(win);
  if (!host) return;
  const { pathname, search, hash } = host.location;
  const next = hashWithSearch(hash, win.location.search);
  if (next !== hash) host.history.replaceState(host.history.state, '', pathname + search + next);
}

/**
 * The link that reopens this view: TensorBoard's address inside TensorBoard (after mirroring),
 * else this page's own.
 */
export function shareableLink(win: Win): string {
  const host = tensorBoardWindow(win);
  if (!host) return win.location.href;
  mirrorToHost(win);
  return host.location.href;
}

/**
 * Mirrors every later change of this page's address. Views write their own parameters
 * (`view-params.ts`, the trace viewer's window), so the hook sits on the history calls they all
 * use rather than in each of them.
 */
export function installHostMirror(win: Window): void {
  if (!tensorBoardWindow(win)) return;
  const history = win.history;
  for (const name of ['pushState', 'replaceState'] as const) {
    const original = history[name].bind(history);
    history[name] = (data: unknown, unused: string, url?: string | URL | null) => {
      original(data, unused, url);
      mirrorQuietly(win);
    };
  }
  win.addEventListener('popstate', () => mirrorQuietly(win));
  mirrorQuietly(win);
}

/**
 * A failed mirror never breaks the caller: browsers throttle history calls (a fast zoom of the
 * trace viewer replaces its range many times a second); the next change mirrors again.
 */
function mirrorQuietly(win: Window): void {
  try {
    mirrorToHost(win);
  } catch {
    // throttled or refused: TensorBoard's address catches up on the next change
  }
}
