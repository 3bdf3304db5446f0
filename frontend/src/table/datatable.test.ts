import { describe, expect, it } from 'vitest';
import { emptyReason, nameColumns } from './datatable';

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

describe('nameColumns', () => {
  it('names the string columns called name or *_name', () => {
    const table = {
      cols: [
        { id: 'name', label: 'Name', type: 'string' },
        { id: 'kernel_name', label: 'Kernel', type: 'string' },
        { id: 'calls', label: 'Calls', type: 'number' },
        { id: 'tensor_cores', label: 'Tensor Cores used', type: 'string' },
        { id: 'count_name', label: 'Not a string', type: 'number' },
      ],
      rows: [],
    };
    expect(nameColumns(table)).toEqual(['name', 'kernel_name']);
  });
});
