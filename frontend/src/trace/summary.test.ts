import { describe, expect, it } from 'vitest';
import { isTracePayload, summarizeTrace } from './summary';

const events = [
  { ph: 'M', name: 'process_name', pid: 1, args: { name: 'vm /host:CPU' } },
  { ph: 'M', name: 'thread_name', pid: 1, tid: 10, args: { name: 'main' } },
  { ph: 'M', name: 'thread_name', pid: 1, tid: 2, args: { name: 'worker' } },
  { ph: 'M', name: 'process_name', pid: 1001, args: { name: '/device:GPU:0' } },
  { ph: 'X', name: 'MatMul', pid: 1, tid: 10, ts: 0, dur: 30 },
  { ph: 'X', name: 'MatMul', pid: 1, tid: 10, ts: 40, dur: 10 },
  { ph: 'X', name: 'Relu', pid: 1, tid: 2, ts: 5, dur: 35 },
  { ph: 'i', name: 'mark', pid: 1, tid: 2, ts: 100, s: 't' },
  { ph: 'C', name: 'mem', pid: 1001, entries: [] },
  {},
];

describe('summarizeTrace', () => {
  const summary = summarizeTrace(events);
  it('counts processes, threads and non-metadata events', () => {
    expect(summary.processCount).toBe(2);
    expect(summary.threadCount).toBe(2);
    expect(summary.eventCount).toBe(5);
    expect(summary.metadataEventCount).toBe(4);
    expect(summary.spanUs).toBe(100);
  });
  it('names threads from metadata and sorts ids numerically', () => {
    expect(summary.threads.map((t) => [t.pid, t.tid, t.processName, t.threadName, t.eventCount])).toEqual([
      ['1', '2', 'vm /host:CPU', 'worker', 2],
      ['1', '10', 'vm /host:CPU', 'main', 2],
      ['1001', '', '/device:GPU:0', '', 1],
    ]);
  });
  it('ranks event names by total duration of X events', () => {
    expect(summary.topEvents).toEqual([
      { name: 'MatMul', count: 2, totalDurationUs: 40, maxDurationUs: 30 },
      { name: 'Relu', count: 1, totalDurationUs: 35, maxDurationUs: 35 },
    ]);
  });
  it('handles an empty trace and junk entries', () => {
    expect(summarizeTrace([null, 3, 'x'])).toMatchObject({ processCount: 0, eventCount: 0, spanUs: 0 });
    expect(isTracePayload({ traceEvents: [] })).toBe(true);
    expect(isTracePayload({ cols: [] })).toBe(false);
  });
});
