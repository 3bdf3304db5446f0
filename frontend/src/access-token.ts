/**
 * The live page's access token (docs/security.md, "Live tracing"). A server started by
 * `live.serve` prints a link with `?token=…` and answers no route without that token, so another
 * user of the machine, or another site in this browser, cannot use the page.
 *
 * The page takes the token from its address once, keeps it in localStorage (per origin: host and
 * port, so a reload or a second tab keeps working) and removes it from the address bar (it is
 * not shown, and not in links copied from there). `ProfileApi` adds it to every request,
 * downloads included. Not a cookie: cookies are sent to every port of a host, so another user's
 * server on another port would receive it.
 *
 *   const token = takeAccessToken(window.location, window.history, storage);
 *   const api = new ProfileApi(base, undefined, token);
 */

export const TOKEN_PARAM = 'token';
export const TOKEN_STORAGE_KEY = 'tbprof.accessToken';

type TokenStorage = Pick<Storage, 'getItem' | 'setItem'>;

/** The token from the page address (then stored and removed from it), else the stored one. */
export function takeAccessToken(
  location: { search: string; pathname: string; hash: string },
  history: Pick<History, 'replaceState' | 'state'>,
  storage: TokenStorage | undefined,
): string | undefined {
  const params = new URLSearchParams(location.search);
  const given = params.get(TOKEN_PARAM);
  if (given === null) return storage?.getItem(TOKEN_STORAGE_KEY) ?? undefined;
  params.delete(TOKEN_PARAM);
  const search = params.toString();
  history.replaceState(history.state, '', location.pathname + (search ? '?' + search : '') + location.hash);
  try {
    storage?.setItem(TOKEN_STORAGE_KEY, given);
  } catch {
    // Storage full or refused: the token still works until the page is reloaded.
  }
  return given;
}
