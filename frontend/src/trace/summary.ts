/**
 * A summary of a Chrome trace-event JSON payload (`{"traceEvents": [...]}`): processes and
 * threads named by `M` metadata events, event counts, and the event names with the largest
 * total duration over complete (`X`) events. One pass over the events, no per-event allocation
 * besides the map entries.
 */

export interface TraceEvent {
  ph?: string;
  name?: string;
  pid?: number | string;
  tid?: number | string;
  ts?: number;
  dur?: number;
  args?: Record<string, unknown>;
}

export interface ThreadSummary {
  pid: string;
  tid: string;
  processName: string;
  threadName: string;
  eventCount: number;
}

export interface EventNameSummary {
  name: string;
  count: number;
  totalDurationUs: number;
  maxDurationUs: number;
}

export interface TraceSummary {
  processCount: number;
  threadCount: number;
  eventCount: number;
  metadataEventCount: number;
  /** One row per thread that has events or a name, sorted by pid then tid. */
  threads: ThreadSummary[];
  /** Event names by total duration, longest first. */
  topEvents: EventNameSummary[];
  spanUs: number;
}

export function isTracePayload(value: unknown): value is { traceEvents: unknown[] } {
  return (
    !!value &&
    typeof value === 'object' &&
    Array.isArray((value as { traceEvents?: unknown }).traceEvents)
  );
}

interface ProcessEntry {
  name: string;
  eventCount: number;
  threads: Map<string, { name: string; eventCount: number }>;
}

export function summarizeTrace(events: readonly unknown[], topN = 25): TraceSummary {
  const processes = new Map<string, ProcessEntry>();
  const byName = new Map<string, EventNameSummary>();
  let eventCount = 0;
  let metadataEventCount = 0;
  let minTs = Infinity;
  let maxEnd = -Infinity;

  const processFor = (pid: string): ProcessEntry => {
    let entry = processes.get(pid);
    if (!entry) {
      entry = { name: '', eventCount: 0, threads: new Map() };
      processes.set(pid, entry);
    }
    return entry;
  };
  const threadFor = (pid: string, tid: string) => {
    const threads = processFor(pid).threads;
    let entry = threads.get(tid);
    if (!entry) {
      entry = { name: '', eventCount: 0 };
      threads.set(tid, entry);
    }
    return entry;
  };

  for (const raw of events) {
    if (!raw || typeof raw !== 'object') continue;
    const event = raw as TraceEvent;
    if (event.ph === undefined) continue; // the trailing `{}` of non-streaming traces
    const pid = event.pid === undefined ? '' : String(event.pid);
    if (event.ph === 'M') {
      metadataEventCount++;
      const label = typeof event.args?.name === 'string' ? event.args.name : '';
      if (event.name === 'process_name') processFor(pid).name = label;
      else if (event.name === 'thread_name' && event.tid !== undefined) {
        threadFor(pid, String(event.tid)).name = label;
      }
      continue;
    }
    eventCount++;
    const process = processFor(pid);
    process.eventCount++;
    if (event.tid !== undefined) threadFor(pid, String(event.tid)).eventCount++;
    if (typeof event.ts === 'number') {
      minTs = Math.min(minTs, event.ts);
      maxEnd = Math.max(maxEnd, event.ts + (typeof event.dur === 'number' ? event.dur : 0));
    }
    if (event.ph === 'X') addDuration(byName, String(event.name ?? ''), Number(event.dur) || 0);
  }

  return {
    processCount: processes.size,
    threadCount: [...processes.values()].reduce((sum, p) => sum + p.threads.size, 0),
    eventCount,
    metadataEventCount,
    threads: threadRows(processes),
    topEvents: [...byName.values()]
      .sort((a, b) => b.totalDurationUs - a.totalDurationUs || a.name.localeCompare(b.name))
      .slice(0, topN),
    spanUs: maxEnd >= minTs ? maxEnd - minTs : 0,
  };
}

function addDuration(byName: Map<string, EventNameSummary>, name: string, durationUs: number): void {
  let entry = byName.get(name);
  if (!entry) {
    entry = { name, count: 0, totalDurationUs: 0, maxDurationUs: 0 };
    byName.set(name, entry);
  }
  entry.count++;
  entry.totalDurationUs += durationUs;
  entry.maxDurationUs = Math.max(entry.maxDurationUs, durationUs);
}

function threadRows(processes: Map<string, ProcessEntry>): ThreadSummary[] {
  const rows: ThreadSummary[] = [];
  for (const pid of sortedIds(processes.keys())) {
    const process = processes.get(pid)!;
    const ownEvents = process.eventCount - [...process.threads.values()].reduce((s, t) => s + t.eventCount, 0);
    if (process.threads.size === 0 || ownEvents > 0) {
      rows.push({ pid, tid: '', processName: process.name, threadName: '', eventCount: ownEvents });
    }
    for (const tid of sortedIds(process.threads.keys())) {
      const thread = process.threads.get(tid)!;
      rows.push({ pid, tid, processName: process.name, threadName: thread.name, eventCount: thread.eventCount });
    }
  }
  return rows;
}

function sortedIds(ids: Iterable<string>): string[] {
  return [...ids].sort((a, b) => {
    const na = Number(a);
    const nb = Number(b);
    if (a !== '' && b !== '' && Number.isFinite(na) && Number.isFinite(nb)) return na - nb;
    return a.localeCompare(b);
  });
}
