import { describe, expect, it } from 'vitest';
import { decodeWindow, type TraceWindow, type WindowRequest } from './contract';
import { Lru } from './lru';
import { stubWindow } from './stub-answers';
import { coverage, pickWindow, serves, WindowLoader, type Timers } from './window-loader';

const win = (request: WindowRequest): TraceWindow => decodeWindow(stubWindow(request), request);

describe('Lru', () => {
  it('drops the least recently used entry', () => {
    const lru = new Lru<string, number>(2);
    lru.set('a', 1);
    lru.set('b', 2);
    lru.get('a');
    lru.set('c', 3);
    expect(lru.peek('b')).toBeUndefined();
    expect(lru.values()).toEqual([3, 1]);
  });
});

describe('choosing windows', () => {
  const whole = win({ startMs: 0, endMs: 0.3, resolution: 1000 });
  const part = win({ startMs: 0.1, endMs: 0.2, resolution: 1000 });
  it('measures coverage', () => {
    expect(coverage(part, { startMs: 0.15, endMs: 0.25 })).toBeCloseTo(0.5);
    expect(coverage(part, { startMs: 0.25, endMs: 0.3 })).toBe(0);
  });
  it('serves a request only when it covers it at the same or finer pixels', () => {
    expect(serves(whole, { startMs: 0.1, endMs: 0.2, resolution: 300 })).toBe(true);
    expect(serves(whole, { startMs: 0.1, endMs: 0.2, resolution: 1000 })).toBe(false);
    expect(serves(part, { startMs: 0.05, endMs: 0.2, resolution: 10 })).toBe(false);
    expect(serves({ ...whole, truncated: true }, { startMs: 0.1, endMs: 0.2, resolution: 10 })).toBe(false);
  });
  it('prefers the window at the same zoom, even when it covers a bit less', () => {
    expect(pickWindow([whole, part], { startMs: 0.12, endMs: 0.22 }, '')).toBe(part);
    expect(pickWindow([whole, part], { startMs: 0, endMs: 0.3 }, '')).toBe(whole);
    expect(pickWindow([part], { startMs: 0.25, endMs: 0.3 }, '')).toBeUndefined();
  });
  it('does not mix row filters', () => {
    const filtered = win({ startMs: 0.1, endMs: 0.2, resolution: 1000, pids: [1701] });
    expect(pickWindow([filtered], { startMs: 0.1, endMs: 0.2 }, '')).toBeUndefined();
  });
});

function fakeTimers() {
  const pending: { callback: () => void; ms: number }[] = [];
  const timers: Timers = {
    set: (callback, ms) => {
      const entry = { callback, ms };
      pending.push(entry);
      return entry;
    },
    clear: (handle) => {
      const i = pending.indexOf(handle as (typeof pending)[number]);
      if (i >= 0) pending.splice(i, 1);
    },
  };
  const flush = () => pending.splice(0).forEach((p) => p.callback());
  return { timers, pending, flush };
}

describe('WindowLoader', () => {
  function setup() {
    const calls: { request: WindowRequest; signal: AbortSignal; resolve: () => void }[] = [];
    const fetchWindow = (request: WindowRequest, signal: AbortSignal) =>
      new Promise<TraceWindow>((resolve) => calls.push({ request, signal, resolve: () => resolve(win(request)) }));
    const clock = fakeTimers();
    const loader = new WindowLoader(fetchWindow, 100, 4, clock.timers);
    const loaded: TraceWindow[] = [];
    loader.onLoad = (w) => loaded.push(w);
    return { loader, calls, clock, loaded };
  }

  it('debounces: only the last wanted window of a burst is requested', async () => {
    const { loader, calls, clock, loaded } = setup();
    for (let i = 0; i < 5; i++) loader.want({ startMs: 0.01 * i, endMs: 0.1 + 0.01 * i, resolution: 1000 });
    expect(calls).toHaveLength(0);
    expect(clock.pending).toHaveLength(1);
    clock.flush();
    expect(calls).toHaveLength(1);
    expect(calls[0].request.startMs).toBeCloseTo(0.04);
    calls[0].resolve();
    await Promise.resolve();
    await Promise.resolve();
    expect(loaded).toHaveLength(1);
  });

  it('aborts the request a newer one supersedes, and ignores its answer', async () => {
    const { loader, calls, clock, loaded } = setup();
    loader.want({ startMs: 0, endMs: 0.1, resolution: 1000 });
    clock.flush();
    loader.want({ startMs: 0.1, endMs: 0.2, resolution: 1000 });
    clock.flush();
    expect(calls[0].signal.aborted).toBe(true);
    expect(calls[1].signal.aborted).toBe(false);
    calls[0].resolve();
    calls[1].resolve();
    await new Promise((r) => setTimeout(r, 0));
    expect(loaded.map((w) => w.startMs)).toEqual([0.1]);
  });

  it('answers from the cache without a request, and keeps the overview apart', async () => {
    const { loader, calls, clock } = setup();
    const overviewPromise = loader.loadOverview({ startMs: 0, endMs: 0.3, resolution: 3000 });
    calls[0].resolve();
    const overview = await overviewPromise;
    expect(loader.want({ startMs: 0.1, endMs: 0.2, resolution: 300 })).toBe(overview);
    expect(clock.pending).toHaveLength(0);
    for (let i = 0; i < 6; i++) {
      loader.want({ startMs: 0.01 * i, endMs: 0.01 * i + 0.001, resolution: 1000 });
      clock.flush();
      calls[calls.length - 1].resolve();
      await new Promise((r) => setTimeout(r, 0));
    }
    // The LRU (4) dropped the overview's cache entry, but it stays drawable.
    expect(loader.best({ startMs: 0.25, endMs: 0.3 }, '')).toBe(overview);
  });

  it('dispose cancels the timer and the request', () => {
    const { loader, calls, clock } = setup();
    loader.want({ startMs: 0, endMs: 0.1, resolution: 1000 });
    loader.dispose();
    expect(clock.pending).toHaveLength(0);
    expect(calls).toHaveLength(0);
    expect(loader.loading).toBe(false);
  });
});
