import { describe, expect, it } from 'vitest';
import { emptyReason } from './datatable';

const cols = [{ id: 'device', label: 'GPU', type: 'string' }];

describe('emptyReason', () => {
  it("is the server's reason when the table has no rows", () => {
    const table = { cols, rows: [], p: { title: 'GPU summary', empty_reason: 'No GPU ran in this trace.' } };
    expect(emptyReason(table)).toBe('No GPU ran in this trace.');
  });

  it('is empty when the table has rows, or no reason was given', () => {
    const reason = { title: 'GPU summary', empty_reason: 'No GPU ran in this trace.' };
    expect(emptyReason({ cols, rows: [{ c: [{ v: 'GPU 0' }] }], p: reason })).toBe('');
    expect(emptyReason({ cols, rows: [], p: { title: 'GPU summary' } })).toBe('');
    expect(emptyReason({ cols, rows: [] })).toBe('');
  });
});
