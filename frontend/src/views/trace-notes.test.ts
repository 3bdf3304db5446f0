import { describe, expect, it } from 'vitest';
import { hostNoteText } from './trace-host-note';
import { isTraceSizeEstimate, sizeSentence } from './trace-raw-links';

describe('trace host note', () => {
  it('names the host drawn and how many there are', () => {
    expect(hostNoteText('b', ['a', 'b', 'c'])).toBe('Host b (2 of 3 hosts; the trace viewer draws one at a time).');
    expect(hostNoteText('gone', ['a', 'b'])).toContain('one of 2 hosts');
    expect(hostNoteText('ALL_HOSTS', ['timeline-4', 'timeline-8', 'timeline-12'])).toBe(
      "All 3 hosts drawn on one time line, each one's processes named after it.",
    );
  });
});

describe('raw trace size', () => {
  it('says the size before sending, "about" unless exact', () => {
    const estimate = { events: 34023, bytes: 6.5 * 1024 * 1024, gzipBytes: 0.64 * 1024 * 1024, exact: false };
    expect(sizeSentence(estimate)).toBe('The raw trace is about 6.50 MiB of JSON (about 655.36 KiB sent compressed), 34023 events.');
    expect(sizeSentence({ ...estimate, bytes: 50248, gzipBytes: 4485, exact: true })).toMatch(/^The raw trace is 49.07 KiB/);
  });
  it('accepts only the server\'s shape', () => {
    expect(isTraceSizeEstimate({ events: 1, bytes: 2, gzipBytes: 3, exact: true })).toBe(true);
    expect(isTraceSizeEstimate({ traceEvents: [] })).toBe(false);
    expect(isTraceSizeEstimate(null)).toBe(false);
  });
});
