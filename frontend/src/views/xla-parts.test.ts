import { describe, expect, it } from 'vitest';
import { defaultModule } from './xla-parts';

describe('default module', () => {
  it('prefers the URL, then the last compiled user program', () => {
    const modules = ['jit__normal(4)', 'jit_add(12)', 'jit_step(8)'];
    expect(defaultModule(modules, 'jit_step(8)')).toBe('jit_step(8)');
    expect(defaultModule(modules, 'gone(1)')).toBe('jit_add(12)');
    expect(defaultModule(['jit__normal(4)'])).toBe('jit__normal(4)');
    expect(defaultModule([])).toBe('');
  });
});
