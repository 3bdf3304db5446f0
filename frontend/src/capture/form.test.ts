import { describe, expect, it } from 'vitest';
import {
  DEFAULT_CAPTURE_FORM,
  captureQuery,
  expectedCaptureMs,
  loadCaptureForm,
  saveCaptureForm,
  validateCapture,
} from './form';

function memoryStorage() {
  const items = new Map<string, string>();
  return {
    getItem: (key: string) => items.get(key) ?? null,
    setItem: (key: string, value: string) => void items.set(key, value),
  };
}

describe('capture form', () => {
  it('has the defaults of the upstream dialog', () => {
    expect(DEFAULT_CAPTURE_FORM).toMatchObject({
      isTpuName: false,
      durationMs: 1000,
      hostTracerLevel: 2,
      deviceTracerLevel: 1,
      pythonTracerLevel: 0,
      numRetry: 3,
      delayMs: 0,
    });
  });
  it('builds the query upstream sends', () => {
    const query = captureQuery({ ...DEFAULT_CAPTURE_FORM, serviceAddr: ' localhost:9999 ', workerList: 'w1' });
    expect(new URLSearchParams(query as Record<string, string>).toString()).toBe(
      'service_addr=localhost%3A9999&is_tpu_name=false&duration=1000&num_retry=3&worker_list=' +
        '&host_tracer_level=2&device_tracer_level=1&python_tracer_level=0&delay=0',
    );
    expect(captureQuery({ ...DEFAULT_CAPTURE_FORM, serviceAddr: 'tpu', isTpuName: true, workerList: 'w1' })).toMatchObject({
      is_tpu_name: 'true',
      worker_list: 'w1',
    });
  });
  it('validates fields', () => {
    expect(validateCapture({ ...DEFAULT_CAPTURE_FORM, serviceAddr: 'a:1' })).toEqual({});
    const errors = validateCapture({ ...DEFAULT_CAPTURE_FORM, durationMs: NaN, hostTracerLevel: 4, delayMs: -1 });
    expect(Object.keys(errors).sort()).toEqual(['delayMs', 'durationMs', 'hostTracerLevel', 'serviceAddr']);
  });
  it('remembers the last values and ignores bad saved data', () => {
    const storage = memoryStorage();
    saveCaptureForm(storage, { ...DEFAULT_CAPTURE_FORM, serviceAddr: 'h:1', durationMs: 2500 });
    expect(loadCaptureForm(storage)).toMatchObject({ serviceAddr: 'h:1', durationMs: 2500, numRetry: 3 });
    storage.setItem('tensorboard_plugin_profile.capture.v1', '{"durationMs": "x", "bogus": 1');
    expect(loadCaptureForm(storage)).toEqual(DEFAULT_CAPTURE_FORM);
    expect(loadCaptureForm(undefined)).toEqual(DEFAULT_CAPTURE_FORM);
  });
  it('counts down from delay plus duration', () => {
    expect(expectedCaptureMs({ ...DEFAULT_CAPTURE_FORM, delayMs: 500 })).toBe(1500);
  });
});
