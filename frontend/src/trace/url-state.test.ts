import { describe, expect, it } from 'vitest';
import { defaultTab, msForUrl, initialTab, readTraceUrl, writeTraceUrl } from './url-state';

describe('trace URL state', () => {
  it('round-trips the window, the event and the tab, keeping other parameters', () => {
    const search = writeTraceUrl('?run=r&tool=trace_viewer%40&host=vm', { startMs: 12.5, endMs: 40.000001, event: 11, tab: 'summary' });
    const params = new URLSearchParams(search);
    expect(params.get('run')).toBe('r');
    expect(params.get('tool')).toBe('trace_viewer@');
    expect(readTraceUrl(search)).toEqual({ startMs: 12.5, endMs: 40.000001, event: 11, tab: 'summary' });
  });
  it('removes what is not set', () => {
    const search = writeTraceUrl('?run=r&start_ms=1&end_ms=2&event=3', {});
    expect(search).toBe('?run=r');
    expect(writeTraceUrl('?start_ms=1', {})).toBe('');
  });
  it('ignores broken values', () => {
    expect(readTraceUrl('?start_ms=abc&end_ms=2')).toEqual({});
    expect(readTraceUrl('?start_ms=5&end_ms=2')).toEqual({});
    expect(readTraceUrl('?event=-1')).toEqual({});
    expect(readTraceUrl('?event=1.5')).toEqual({});
  });
  it('writes times to the nanosecond without float noise', () => {
    expect(msForUrl(0.1 + 0.2)).toBe('0.3');
    expect(msForUrl(3600000.0000004)).toBe('3600000');
    expect(msForUrl(3600000.000123)).toBe('3600000.000123');
    expect(msForUrl(-0.0000001)).toBe('0');
  });
});

describe('tabs', () => {
  it('opens trace_viewer@ on the timeline and trace_viewer on the summary unless the URL says otherwise', () => {
    expect(defaultTab('trace_viewer@')).toBe('timeline');
    expect(defaultTab('trace_viewer')).toBe('summary');
    expect(initialTab('trace_viewer', 'timeline')).toBe('timeline');
    expect(initialTab('trace_viewer@', 'bogus')).toBe('timeline');
  });
});
