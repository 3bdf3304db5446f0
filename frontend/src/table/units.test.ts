import { describe, expect, it } from 'vitest';
import { tableToCsv } from './csv';
import { formatCell } from './format';
import { sortRows } from './sort';
import { columnUnit, formatInUnit, labelWithoutUnit, rawWithUnit } from './units';

const us = { id: 'self', label: 'Self-time (us)', type: 'number' };

describe('column units', () => {
  it('come from p.unit first, else only from the label\'s unit suffix', () => {
    expect(columnUnit({ label: 'Whatever', type: 'number', p: { unit: 'us' } })).toBe('us');
    expect(columnUnit({ label: 'Size (bytes)', type: 'number', p: { unit: 'bytes' } })).toBe('B');
    expect(columnUnit({ label: 'Time (ms)', type: 'number', p: { unit: 'furlongs' } })).toBeNull();
    expect(columnUnit(us)).toBe('us');
    expect(columnUnit({ label: 'Heap (MiB)', type: 'number' })).toBe('MiB');
    expect(columnUnit({ label: 'Total Duration (\u03bcs)', type: 'number' })).toBe('us');
    expect(columnUnit({ label: 'Total Duration (\u00b5s)', type: 'number' })).toBe('us');
    expect(columnUnit({ label: 'Peak of live tensors (bytes)', type: 'number' })).toBe('B');
    expect(columnUnit({ label: 'Self time (%)', type: 'number' })).toBeNull();
    expect(columnUnit({ label: 'Step(s)', type: 'number' })).toBeNull();
    expect(columnUnit({ label: 'Memory BW (GiB/s)', type: 'number' })).toBeNull();
    expect(columnUnit({ label: 'Time (us)', type: 'string' })).toBeNull();
    expect(columnUnit(undefined)).toBeNull();
  });

  it('leave the header without the suffix only when the column has a unit', () => {
    expect(labelWithoutUnit('Self-time (us)', us)).toBe('Self-time');
    expect(labelWithoutUnit('Self time (%)', { label: 'Self time (%)', type: 'number' })).toBe('Self time (%)');
  });

  it('drop a declared unit from inside a label (the comparison headers)', () => {
    const base = { label: 'Device self (us) — baseline', type: 'number', p: { unit: 'us' } };
    expect(labelWithoutUnit(base.label, base)).toBe('Device self — baseline');
    // Without a declared unit only a suffix is read: the label stays as it is.
    const plain = { label: 'Device self (us) — baseline', type: 'number' };
    expect(labelWithoutUnit(plain.label, plain)).toBe('Device self (us) — baseline');
  });
});

describe('values in a readable unit', () => {
  it('shows times in ns, µs, ms or s and sizes in B, KiB, MiB or GiB', () => {
    expect(formatInUnit(1149007.737, 'us')).toBe('1.15 s');
    expect(formatInUnit(43270299, 'us')).toBe('43.3 s');
    expect(formatInUnit(43347.486, 'ms')).toBe('43.3 s');
    expect(formatInUnit(812.4, 'us')).toBe('812 µs');
    expect(formatInUnit(0.25, 'us')).toBe('250 ns');
    expect(formatInUnit(0, 'us')).toBe('0');
    expect(formatInUnit(512, 'B')).toBe('512 B');
    expect(formatInUnit(3 * 1024 * 1024, 'B')).toBe('3.00 MiB');
    expect(formatInUnit(2048, 'MiB')).toBe('2.00 GiB');
    expect(formatInUnit(0.5, 'MiB')).toBe('512.00 KiB');
    expect(formatInUnit(-2048, 'B')).toBe('-2.00 KiB');
    expect(formatInUnit(Number.NaN, 'us')).toBe('NaN');
  });

  it('keep the raw value for the tooltip, sorting and CSV', () => {
    expect(rawWithUnit(1149007.737, 'us')).toBe('1149007.737 us');
    expect(rawWithUnit(1536, 'B')).toBe('1536 bytes');
    expect(formatCell({ v: 1149007.737 }, us)).toBe('1.15 s');
    expect(formatCell({ v: 1149007.737 })).toBe('1149007.737');
    const table = { cols: [us], rows: [{ c: [{ v: 900 }] }, { c: [{ v: 1200000 }] }, { c: [{ v: 45000 }] }] };
    const sorted = sortRows(table.rows, { column: 0, direction: 'desc' });
    expect(sorted.map((r) => r.c[0]?.v)).toEqual([1200000, 45000, 900]);
    expect(tableToCsv(table)).toBe('"Self-time (us)"\n"900"\n"1200000"\n"45000"\n');
  });
});
