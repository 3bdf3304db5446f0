import { describe, expect, it } from 'vitest';
import { peakParams } from './roofline-peaks';

describe('peakParams', () => {
  it('sends both peaks, or none', () => {
    expect(peakParams({ gflops: '100', gibS: '10' })).toEqual({ peak_gflops: '100', peak_gib_s: '10' });
    expect(peakParams({ gflops: '', gibS: '' })).toEqual({});
    expect(peakParams(null)).toEqual({});
  });
});
