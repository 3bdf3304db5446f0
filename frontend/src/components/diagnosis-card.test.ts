// @vitest-environment happy-dom
import { afterEach, describe, expect, it } from 'vitest';
import type { Diagnosis, ProfileApi } from '../api';
import './diagnosis-card';
import type { DiagnosisCard } from './diagnosis-card';

async function mount(diagnosis: Diagnosis): Promise<DiagnosisCard> {
  const element = document.createElement('pf-diagnosis');
  element.api = { diagnose: async () => diagnosis } as unknown as ProfileApi;
  document.body.append(element);
  await element.updateComplete;
  await new Promise((resolve) => setTimeout(resolve, 0));
  await element.updateComplete;
  return element;
}

afterEach(() => document.body.replaceChildren());

describe('pf-diagnosis', () => {
  it('lists the folders the server may not read, as text', async () => {
    const element = await mount({
      exists: true,
      logdir: 'logs',
      sessions: 0,
      skipped: [],
      other_files: [],
      unreadable: ['run/plugins: permission denied', '<b>x</b>: permission denied'],
    });
    const items = [...element.shadowRoot!.querySelectorAll('ul.unreadable li')].map((li) => li.textContent);
    expect(items).toEqual(['run/plugins: permission denied', '<b>x</b>: permission denied']);
    expect(element.shadowRoot!.querySelector('ul.unreadable b')).toBeNull();
  });

  it('shows no such list when everything was readable', async () => {
    const element = await mount({ exists: true, logdir: 'logs', sessions: 0, skipped: [], other_files: [] });
    expect(element.shadowRoot!.querySelector('ul.unreadable')).toBeNull();
  });
});
