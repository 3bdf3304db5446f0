import { describe, expect, it } from 'vitest';
import { modelSummary } from './model-view-view';

describe('modelSummary', () => {
  it('shows the trainable total of a TensorFlow graph', () => {
    const metrics = modelSummary({
      cols: [],
      rows: [],
      p: { source: 'TensorFlow graph in events.out.tfevents.1', trainable_parameters: '31504', trainable_bytes: '126016', total_parameters: '94515', total_bytes: '378064' },
    });
    expect(metrics.map((m) => m.label)).toEqual(['Source', 'Trainable parameters', 'All variables / arguments']);
    expect(metrics[1].value).toBe('31,504 (123 KiB)');
  });

  it('names the largest XLA program', () => {
    const metrics = modelSummary({
      cols: [],
      rows: [],
      p: { source: 'entry parameters', largest_program: 'jit_train_step(32)', largest_program_parameters: '153810', total_parameters: '256701', total_bytes: '1026804' },
    });
    expect(metrics[1]).toEqual({ label: 'Parameters of jit_train_step(32)', value: '153,810' });
  });
});
