/**
 * The Capture Profile form (docs/capture.md): defaults, validation, the query it sends, and the
 * last-used values kept in localStorage.
 */
import type { QueryParams } from '../api';

export interface CaptureForm {
  serviceAddr: string;
  isTpuName: boolean;
  durationMs: number;
  hostTracerLevel: number;
  deviceTracerLevel: number;
  pythonTracerLevel: number;
  workerList: string;
  numRetry: number;
  delayMs: number;
}

export const DEFAULT_CAPTURE_FORM: Readonly<CaptureForm> = Object.freeze({
  serviceAddr: '',
  isTpuName: false,
  durationMs: 1000,
  hostTracerLevel: 2,
  deviceTracerLevel: 1,
  pythonTracerLevel: 0,
  workerList: '',
  numRetry: 3,
  delayMs: 0,
});

export const HOST_TRACER_LEVELS: readonly [number, string][] = [
  [0, '0: disable'],
  [1, '1: critical'],
  [2, '2: info'],
  [3, '3: verbose'],
];

const STORAGE_KEY = 'tensorboard_plugin_profile.capture.v1';

/** Messages for invalid fields, keyed by field; empty when the form can be sent. */
export function validateCapture(form: CaptureForm): Partial<Record<keyof CaptureForm, string>> {
  const errors: Partial<Record<keyof CaptureForm, string>> = {};
  if (!form.serviceAddr.trim()) errors.serviceAddr = 'Enter a service address or TPU name.';
  if (!isInt(form.durationMs) || form.durationMs <= 0) errors.durationMs = 'Duration must be a positive whole number of ms.';
  if (!inRange(form.hostTracerLevel, 0, 3)) errors.hostTracerLevel = 'Host trace level is 0 to 3.';
  if (!inRange(form.deviceTracerLevel, 0, 1)) errors.deviceTracerLevel = 'Device trace level is 0 or 1.';
  if (!inRange(form.pythonTracerLevel, 0, 1)) errors.pythonTracerLevel = 'Python trace level is 0 or 1.';
  if (!isInt(form.numRetry) || form.numRetry < 0) errors.numRetry = 'Retries must be 0 or more.';
  if (!isInt(form.delayMs) || form.delayMs < 0) errors.delayMs = 'Delay must be 0 or more ms.';
  return errors;
}

function isInt(value: number): boolean {
  return Number.isInteger(value);
}

function inRange(value: number, low: number, high: number): boolean {
  return isInt(value) && value >= low && value <= high;
}

/** Query parameters of `capture_profile`, in the order upstream sends them. */
export function captureQuery(form: CaptureForm): QueryParams {
  return {
    service_addr: form.serviceAddr.trim(),
    is_tpu_name: form.isTpuName ? 'true' : 'false',
    duration: form.durationMs,
    num_retry: form.numRetry,
    worker_list: form.isTpuName ? form.workerList.trim() : '',
    host_tracer_level: form.hostTracerLevel,
    device_tracer_level: form.deviceTracerLevel,
    python_tracer_level: form.pythonTracerLevel,
    delay: form.delayMs,
  };
}

/** Milliseconds the capture is expected to run before the server starts collecting. */
export function expectedCaptureMs(form: CaptureForm): number {
  return Math.max(0, form.delayMs) + Math.max(0, form.durationMs);
}

/** The saved form merged over the defaults; unknown or mistyped fields are dropped. */
export function loadCaptureForm(storage: Pick<Storage, 'getItem'> | undefined): CaptureForm {
  const form: CaptureForm = { ...DEFAULT_CAPTURE_FORM };
  let saved: unknown;
  try {
    saved = JSON.parse(storage?.getItem(STORAGE_KEY) ?? 'null');
  } catch {
    return form;
  }
  if (!saved || typeof saved !== 'object') return form;
  for (const key of Object.keys(DEFAULT_CAPTURE_FORM) as (keyof CaptureForm)[]) {
    const value = (saved as Record<string, unknown>)[key];
    if (typeof value === typeof DEFAULT_CAPTURE_FORM[key]) (form as unknown as Record<string, unknown>)[key] = value;
  }
  return form;
}

export function saveCaptureForm(storage: Pick<Storage, 'setItem'> | undefined, form: CaptureForm): void {
  try {
    storage?.setItem(STORAGE_KEY, JSON.stringify(form));
  } catch {
    // Storage may be full or disabled (private mode); remembering is best effort.
  }
}
