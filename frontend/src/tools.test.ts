import { describe, expect, it } from 'vitest';
import { canonicalTool, isTool, runToolFor } from './tools';

describe('tool names', () => {
  it('maps marks and legacy names to the tool', () => {
    expect(canonicalTool('trace_viewer@^')).toBe('trace_viewer');
    expect(canonicalTool('tensorflow_stats')).toBe('framework_op_stats');
    expect(canonicalTool('kernel_stats^')).toBe('kernel_stats');
    expect(isTool('tensorflow_stats^', 'framework_op_stats')).toBe(true);
    expect(isTool('overview_page', 'trace_viewer')).toBe(false);
  });

  it('finds the name a run lists a tool under, preferred first', () => {
    expect(runToolFor('trace_viewer', ['trace_viewer', 'trace_viewer@'])).toBe('trace_viewer@');
    expect(runToolFor('framework_op_stats', ['tensorflow_stats'])).toBe('tensorflow_stats');
    expect(runToolFor('tensorflow_stats', ['framework_op_stats'])).toBe('framework_op_stats');
    expect(runToolFor('pod_viewer', ['overview_page'])).toBeUndefined();
    expect(runToolFor('memory_profile', ['memory_profile^'])).toBe('memory_profile^');
  });
});
