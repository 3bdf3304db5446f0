/// <reference types="node" />
/**
 * Test helper: reads upstream reference payloads from the shared fixtures at test time
 * (`../../shared/fixtures/reference/<fixture>/<tool>.json[.gz]` from `frontend/`, or
 * $PROFILE_REFERENCE_DIR). They are never copied into the repository.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

export const REFERENCE_DIR =
  process.env.PROFILE_REFERENCE_DIR ?? fileURLToPath(new URL('../../../../shared/fixtures/reference/', import.meta.url));

export const haveReference = existsSync(REFERENCE_DIR);

export function reference(fixture: string, file: string): unknown {
  const path = `${REFERENCE_DIR}/${fixture}/${file}`;
  const bytes = readFileSync(existsSync(path) ? path : path + '.gz');
  return JSON.parse((existsSync(path) ? bytes : gunzipSync(bytes)).toString('utf8'));
}
