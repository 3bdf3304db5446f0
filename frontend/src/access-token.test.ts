import { describe, expect, it } from 'vitest';
import { TOKEN_STORAGE_KEY, takeAccessToken } from './access-token';

function fakes(search: string, stored?: string) {
  const items = new Map<string, string>(stored === undefined ? [] : [[TOKEN_STORAGE_KEY, stored]]);
  const storage = { getItem: (k: string) => items.get(k) ?? null, setItem: (k: string, v: string) => void items.set(k, v) };
  const urls: string[] = [];
  const history = { state: null, replaceState: (_s: unknown, _t: string, url?: string | URL | null) => void urls.push(String(url)) };
  return { location: { search, pathname: '/', hash: '#x' }, history, storage, items, urls };
}

describe('takeAccessToken', () => {
  it('takes the token from the address, stores it and removes it from the address bar', () => {
    const f = fakes('?run=r1&token=abc_-9&tool=overview_page');
    expect(takeAccessToken(f.location, f.history, f.storage)).toBe('abc_-9');
    expect(f.items.get(TOKEN_STORAGE_KEY)).toBe('abc_-9');
    expect(f.urls).toEqual(['/?run=r1&tool=overview_page#x']);
  });
  it('a new link replaces a stored token', () => {
    const f = fakes('?token=new', 'old');
    expect(takeAccessToken(f.location, f.history, f.storage)).toBe('new');
    expect(f.items.get(TOKEN_STORAGE_KEY)).toBe('new');
  });
  it('uses the stored token when the address has none, and leaves the address alone', () => {
    const f = fakes('?run=r1', 'kept');
    expect(takeAccessToken(f.location, f.history, f.storage)).toBe('kept');
    expect(f.urls).toEqual([]);
  });
  it('is undefined on a page without one (TensorBoard, tbprof serve)', () => {
    const f = fakes('');
    expect(takeAccessToken(f.location, f.history, f.storage)).toBeUndefined();
    expect(takeAccessToken(f.location, f.history, undefined)).toBeUndefined();
  });
});
