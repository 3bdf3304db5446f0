import { describe, expect, it } from 'vitest';
import { pickNewestRun, pickOrFirst, readSelection, sameSelection, toolLabel, writeSelection } from './state';

describe('URL selection', () => {
  it('reads run, tool and host and ignores other parameters', () => {
    expect(readSelection('?run=a&tool=trace_viewer%40&host=h1&foo=1')).toEqual({
      run: 'a',
      tool: 'trace_viewer@',
      host: 'h1',
    });
    expect(readSelection('')).toEqual({ run: '', tool: '', host: '' });
  });
  it('writes the selection and keeps unknown parameters', () => {
    const search = writeSelection('?foo=1&host=old', { run: 'r/1', tool: 't', host: '' });
    expect(new URLSearchParams(search).get('foo')).toBe('1');
    expect(readSelection(search)).toEqual({ run: 'r/1', tool: 't', host: '' });
    expect(writeSelection('', { run: '', tool: '', host: '' })).toBe('');
  });
  it('compares selections', () => {
    expect(sameSelection({ run: 'a', tool: 'b', host: '' }, { run: 'a', tool: 'b', host: '' })).toBe(true);
    expect(sameSelection({ run: 'a', tool: 'b', host: '' }, { run: 'a', tool: 'b', host: 'h' })).toBe(false);
  });
});

describe('choices', () => {
  it('keeps a wanted entry or takes the first', () => {
    expect(pickOrFirst(['a', 'b'], 'b')).toBe('b');
    expect(pickOrFirst(['a', 'b'], 'zzz')).toBe('a');
    expect(pickOrFirst([], 'a')).toBe('');
  });
  it('selects the newest new run after a capture', () => {
    expect(pickNewestRun(['2024_01_01'], ['2024_01_01', '2024_02_01', '2024_03_01'], '2024_01_01')).toBe('2024_03_01');
    expect(pickNewestRun(['a', 'b'], ['a', 'b'], 'b')).toBe('b');
    expect(pickNewestRun(['a'], ['b'], 'a')).toBe('b');
  });
  it('labels tools without upstream markers', () => {
    expect(toolLabel('trace_viewer@')).toBe('trace viewer');
    expect(toolLabel('overview_page^')).toBe('overview page');
  });
});
