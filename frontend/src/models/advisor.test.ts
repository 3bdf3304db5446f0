import { describe, expect, it } from 'vitest';
import { countBySeverity, parseAdvice, withHost } from './advisor';

const COLS = ['severity', 'check', 'title', 'evidence', 'advice', 'link', 'numbers'];

function advice(rows: string[][], framework = 'JAX', guide = 'https://docs.jax.dev/en/latest/profiling.html') {
  return {
    cols: COLS.map((id) => ({ id, label: id, type: 'string' })),
    rows: rows.map((r) => ({ c: r.map((v) => ({ v })) })),
    p: { framework, guide },
  };
}

describe('advisor findings', () => {
  it('parses findings and keeps only page-query links', () => {
    const report = parseAdvice(
      advice([
        ['critical', 'input_bound', 'Input-bound', '82%', 'Prefetch', '?run=r&tool=input_pipeline_analyzer', '{}'],
        ['warning', 'x', 'Evil link', 'e', 'a', 'javascript:alert(1)', '{}'],
        ['bogus', 'y', 'Unknown severity', 'e', 'a', 'https://evil.example/', '{}'],
      ]),
    )!;
    expect(report.framework).toBe('JAX');
    expect(report.guide).toBe('https://docs.jax.dev/en/latest/profiling.html');
    expect(report.findings[0]).toMatchObject({ severity: 'critical', linkTool: 'input_pipeline_analyzer' });
    expect(report.findings[1].link).toBe('');
    expect(report.findings[2]).toMatchObject({ severity: 'info', link: '' });
    expect(countBySeverity(report.findings)).toEqual({ critical: 1, warning: 1, info: 1 });
  });

  it('rejects other payloads and unsafe guide links', () => {
    expect(parseAdvice({ cols: [{ id: 'rank' }], rows: [] })).toBeNull();
    expect(parseAdvice(advice([], 'JAX', 'javascript:alert(1)'))!.guide).toBe('');
  });

  it('keeps the page host in links', () => {
    expect(withHost('?run=r&tool=kernel_stats', 'vm')).toBe('?run=r&tool=kernel_stats&host=vm');
    expect(withHost('?run=r&tool=kernel_stats&host=a', 'vm')).toBe('?run=r&tool=kernel_stats&host=a');
    expect(withHost('', 'vm')).toBe('');
  });

});
