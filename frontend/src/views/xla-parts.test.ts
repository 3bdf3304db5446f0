import { describe, expect, it } from 'vitest';
import { defaultModule } from './xla-parts';

describe('default module', () => {
  it('prefers the URL, then the first listed (the server lists the busiest first)', () => {
    const modules = ['jit_step(8)', 'jit_add(12)', 'jit__normal(4)'];
    expect(defaultModule(modules, 'jit_add(12)')).toBe('jit_add(12)');
    expect(defaultModule(modules, 'gone(1)')).toBe('jit_step(8)');
    expect(defaultModule(['jit__normal(4)'])).toBe('jit__normal(4)');
    expect(defaultModule([])).toBe('');
  });
});
