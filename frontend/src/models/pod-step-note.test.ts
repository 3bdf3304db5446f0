import { describe, expect, it } from 'vitest';
import { podStepCountNote } from './pod-step-note';

describe('pod step count note', () => {
  it('explains the two steps the overview leaves out', () => {
    expect(podStepCountNote(173)).toContain('All 173 steps');
    expect(podStepCountNote(173)).toContain('so they count 171.');
  });
  it('says nothing when every tool keeps every step', () => {
    expect(podStepCountNote(5)).toBe('');
    expect(podStepCountNote(0)).toBe('');
  });
});
