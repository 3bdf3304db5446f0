/// <reference types="node" />
/**
 * Test helper: reads upstream reference payloads from the repository's fixtures at test time
 * (`tests/data/reference/<fixture>/<tool>.json[.gz]`, or $PROFILE_REFERENCE_DIR).
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

export const REFERENCE_DIR =
  process.env.PROFILE_REFERENCE_DIR ?? fileURLToPath(new URL('../../../tests/data/reference/', import.meta.url));

export const haveReference = existsSync(REFERENCE_DIR);

export function reference(fixture: string, file: string): unknown {
  const path = `${REFERENCE_DIR}/${fixture}/${file}`;
  const bytes = readFileSync(existsSync(path) ? path : path + '.gz');
  return JSON.parse((existsSync(path) ? bytes : gunzipSync(bytes)).toString('utf8'));
}
