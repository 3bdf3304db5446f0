import { describe, expect, it } from 'vitest';
import { hashWithSearch, installHostMirror, mirrorToHost, restoreFromHost, searchFromHash, shareableLink, tensorBoardWindow } from './host-url';

/** A window with a location and a history that records replaceState, as the functions use. */
function fakeWindow(href: string, parent?: unknown) {
  const win = {
    location: new URL(href),
    history: {
      state: null,
      replaceState(_data: unknown, _unused: string, url: string) {
        win.location = new URL(url, win.location.href);
      },
      pushState(_data: unknown, _unused: string, url: string) {
        win.location = new URL(url, win.location.href);
      },
    },
    parent: undefined as unknown,
  };
  win.parent = parent ?? win;
  return win as unknown as Window & { location: URL };
}

describe('TensorBoard hash', () => {
  it('writes our parameters under p.profile. and keeps TensorBoard\'s tab and keys', () => {
    const hash = hashWithSearch('#profile&darkMode=true', '?run=a/b c&tool=trace_viewer@&start_ms=1.5');
    expect(hash).toBe('#profile&darkMode=true&p.profile.run=a%2Fb%20c&p.profile.tool=trace_viewer%40&p.profile.start_ms=1.5');
    expect(searchFromHash(hash)).toBe('?run=a%2Fb+c&tool=trace_viewer%40&start_ms=1.5');
    expect(hashWithSearch(hash, '?run=x')).toBe('#profile&darkMode=true&p.profile.run=x');
    expect(hashWithSearch('#profile&p.profile.run=x', '')).toBe('#profile');
  });

  it('round-trips values with & = # % and markup, and drops the token', () => {
    const run = 'r&x=1#y%z <b>"\'';
    const hash = hashWithSearch('#profile', '?' + new URLSearchParams({ run, token: 'secret' }).toString());
    expect(hash).not.toContain('secret');
    expect(new URLSearchParams(searchFromHash(hash)).get('run')).toBe(run);
  });

  it('skips malformed, empty, foreign and oversized entries', () => {
    expect(searchFromHash('#profile&p.profile.run=%E0%A4%A&p.profile.=1&p.other.run=z&p.profile.host=' + 'x'.repeat(5000))).toBe('');
    expect(searchFromHash('')).toBe('');
    expect(searchFromHash('#p.profile.tool=a=b')).toBe('');
  });
});

describe('inside TensorBoard', () => {
  const TB = 'http://127.0.0.1:6006/tb/';

  it('finds TensorBoard only as a same-origin parent that is not our own page', () => {
    const alone = fakeWindow('http://127.0.0.1:8791/?run=a');
    expect(tensorBoardWindow(alone)).toBeNull();
    const tb = fakeWindow(TB + '#profile');
    expect(tensorBoardWindow(fakeWindow(TB + 'data/plugin/profile/index.html', tb))).toBe(tb);
    const ours = fakeWindow(TB + 'data/plugin/profile/index.html');
    expect(tensorBoardWindow(fakeWindow(TB + 'data/plugin/profile/index.html', ours))).toBeNull();
    const foreign = {
      get location(): Location {
        throw new DOMException('cross-origin', 'SecurityError');
      },
    };
    expect(tensorBoardWindow(fakeWindow(TB + 'data/plugin/profile/index.html', foreign))).toBeNull();
  });

  it('restores an empty query from the hash, mirrors changes back, and links to TensorBoard', () => {
    const tb = fakeWindow(TB + '?darkMode=false#profile&p.profile.run=r1&p.profile.host=h');
    const frame = fakeWindow(TB + 'data/plugin/profile/index.html', tb);
    restoreFromHost(frame);
    expect(frame.location.search).toBe('?run=r1&host=h');
    frame.history.replaceState(null, '', '?run=r2&tool=trace_viewer&start_ms=10&end_ms=20');
    mirrorToHost(frame);
    expect(tb.location.hash).toBe('#profile&p.profile.run=r2&p.profile.tool=trace_viewer&p.profile.start_ms=10&p.profile.end_ms=20');
    expect(tb.location.search).toBe('?darkMode=false');
    expect(shareableLink(frame)).toBe(tb.location.href);
  });

  it('keeps the iframe\'s own query when it has one (a navigation inside the tab)', () => {
    const tb = fakeWindow(TB + '#profile&p.profile.run=old');
    const frame = fakeWindow(TB + 'data/plugin/profile/index.html?run=new', tb);
    restoreFromHost(frame);
    expect(frame.location.search).toBe('?run=new');
  });
});

describe('installHostMirror', () => {
  it('mirrors each history change, and a refused mirror never breaks the caller', () => {
    const TB = 'http://127.0.0.1:6006/';
    const tb = fakeWindow(TB + '#profile');
    const frame = fakeWindow(TB + 'data/plugin/profile/index.html', tb) as unknown as Window & {
      location: URL;
      addEventListener: () => void;
    };
    frame.addEventListener = () => {};
    installHostMirror(frame);
    frame.history.replaceState(null, '', '?run=a&start_ms=1');
    expect(tb.location.hash).toBe('#profile&p.profile.run=a&p.profile.start_ms=1');
    tb.history.replaceState = () => {
      throw new DOMException('Attempt to use history.replaceState() more than 100 times per 10 seconds', 'SecurityError');
    };
    expect(() => frame.history.replaceState(null, '', '?run=a&start_ms=2')).not.toThrow();
    expect(frame.location.search).toBe('?run=a&start_ms=2');
  });
});
