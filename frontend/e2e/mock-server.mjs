// DEVELOPMENT ONLY: a throwaway stand-in for the Python server, following the HTTP contract the
// frontend codes against (docs/http_api.md). CI runs the e2e test against the real server.
//
//   npm run build && node e2e/mock-server.mjs [port]      # serves on 127.0.0.1:<port> (default 8792)
//   PROFILE_E2E_URL=http://127.0.0.1:8792/ npm run e2e
//
// Runs are the fixture names under tests/data/reference (read at run time),
// plus `xss_run`, whose op names contain markup. Static files are served at /, /data/plugin/profile/
// and /tb/data/plugin/profile/ (a TensorBoard --path_prefix stand-in), with a strict CSP header.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

const here = fileURLToPath(new URL('.', import.meta.url));
const staticDir = join(here, '../../tensorboard_plugin_profile/static');
const referenceDir = process.env.PROFILE_FIXTURES ?? join(here, '../../tests/data/reference');
const port = Number(process.argv[2] ?? 8792);
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; object-src 'none'";
const XSS = '<img src=x onerror=alert(1)>';
const captured = [];

const types = { '.html': 'text/html', '.js': 'application/javascript', '.css': 'text/css', '.json': 'application/json' };

function send(res, status, body, type = 'application/json', extra = {}) {
  res.writeHead(status, { 'Content-Type': type, 'Content-Security-Policy': CSP, 'X-Content-Type-Options': 'nosniff', ...extra });
  res.end(body);
}
const json = (res, value, status = 200) => send(res, status, JSON.stringify(value));
const error = (res, status, code, message) => json(res, { error: { code, message } }, status);

function fixtureRuns() {
  return existsSync(referenceDir) ? readdirSync(referenceDir).sort() : [];
}

function readFixture(run, name) {
  for (const file of [`${name}.json`, `${name}.json.gz`]) {
    const path = join(referenceDir, run, file);
    if (existsSync(path)) {
      const bytes = readFileSync(path);
      return JSON.parse((file.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('utf8'));
    }
  }
  return undefined;
}

function xssTable() {
  const cols = [
    { id: 'rank', label: 'Rank', type: 'number' },
    { id: 'operation', label: 'Operation Name', type: 'string' },
    { id: 'total_time', label: 'Total time (us)', type: 'number' },
    { id: 'eager', label: 'Eager', type: 'boolean' },
  ];
  const names = [XSS, 'MatMul', 'Conv2D', '"quoted", name', 'Relu'];
  const rows = Array.from({ length: 120 }, (_, i) => ({
    c: [{ v: i + 1 }, { v: `${names[i % names.length]}${i >= names.length ? ' #' + i : ''}` }, { v: (i * 37) % 101 + 0.12345 }, i % 7 ? { v: i % 2 === 0 } : null],
  }));
  return [{ cols, rows, p: { architecture_type: 'CPU', task_type: XSS } }];
}

function tools(run) {
  if (run === 'xss_run') return ['framework_op_stats', 'trace_viewer@'];
  if (captured.includes(run)) return ['framework_op_stats'];
  const path = join(referenceDir, run, 'tool_names.txt');
  return existsSync(path) ? readFileSync(path, 'utf8').trim().split(',').filter(Boolean) : null;
}

function hosts(run, tool) {
  const dir = join(referenceDir, run);
  const names = existsSync(dir) ? readdirSync(dir) : [];
  const perHost = [...new Set(names.filter((n) => n.startsWith('trace_viewer.') && !n.startsWith('trace_viewer.json')).map((n) => n.replace(/^trace_viewer\./, '').replace(/\.json(\.gz)?$/, '')))];
  if (perHost.length < 2) return ['localhost'];
  if (tool === 'overview_page') return ['ALL_HOSTS'];
  return ['framework_op_stats', 'input_pipeline_analyzer', 'kernel_stats'].includes(tool) ? ['ALL_HOSTS', ...perHost].sort() : perHost;
}

function toolData(run, tool, host) {
  if (run === 'xss_run') {
    if (tool === 'framework_op_stats') return xssTable();
    return { traceEvents: [{ ph: 'M', name: 'process_name', pid: 1, args: { name: XSS } }, { ph: 'X', name: XSS, pid: 1, tid: 2, ts: 0, dur: 5 }] };
  }
  if (captured.includes(run)) return xssTable();
  if (tool === 'trace_viewer@' && host && host !== 'localhost') return readFixture(run, `trace_viewer.${host}`) ?? readFixture(run, tool);
  return readFixture(run, host && host !== 'localhost' && host !== 'ALL_HOSTS' ? `${tool}.${host}` : tool) ?? readFixture(run, tool);
}

function csv(table) {
  const quote = (value) => `"${String(value ?? '').replace(/"/g, '""')}"`;
  const header = table.cols.map((c) => quote(c.label || c.id)).join(',');
  const rows = (table.rows ?? []).map((r) => table.cols.map((_, i) => quote(r.c[i]?.v ?? '')).join(','));
  return [header, ...rows].join('\n') + '\n';
}

function api(route, q, res) {
  const run = q.get('run') ?? '';
  const tag = q.get('tag') ?? '';
  switch (route) {
    case 'runs':
      return json(res, process.env.MOCK_EMPTY ? [] : [...fixtureRuns(), 'xss_run', ...captured]);
    case 'run_tools': {
      const list = tools(run);
      return list ? json(res, list) : error(res, 404, 'NOT_FOUND', `No run named ${run}`);
    }
    case 'hosts':
      return json(res, hosts(run, tag).map((hostname) => ({ hostname })));
    case 'config':
      return json(res, { hideCaptureProfileButton: false, enableTabNameLabel: false, srcPathPrefix: '' });
    case 'version':
      return send(res, 200, '0.0.0-mock', 'text/plain');
    case 'data':
    case 'data_csv': {
      const data = toolData(run, tag, q.get('host') ?? '');
      if (data === undefined) return error(res, 404, 'NOT_FOUND', `No data for ${tag} in ${run}`);
      if (tag === 'memory_profile' && run === 'jax_cpu_train') return error(res, 404, 'NOT_APPLICABLE', 'This profile has no memory allocator events.');
      if (route === 'data') return json(res, data);
      const table = Array.isArray(data) ? data[0] : data;
      if (!table?.cols) return send(res, 500, "Data format not suitable for CSV (missing 'cols')", 'text/plain');
      return send(res, 200, csv(table), 'text/csv', { 'Content-Disposition': `attachment; filename="${tag}_${run.replace(/[^A-Za-z0-9_-]/g, '_')}.csv"` });
    }
    case 'capture_token':
      return json(res, { token: 'mock-token' });
    case 'capture_profile': {
      const wait = Number(q.get('duration') ?? 1000) + Number(q.get('delay') ?? 0);
      setTimeout(() => {
        if (q.get('service_addr') === 'fail:1') return json(res, { error: 'UNAVAILABLE: No trace event was collected' });
        captured.push(`zz_captured_${captured.length + 1}`);
        json(res, { result: 'Capture profile successfully. Please refresh.' });
      }, Math.min(wait, 5000));
      return;
    }
    default:
      return false;
  }
}

function serveStatic(name, res) {
  const path = normalize(join(staticDir, name || 'index.html'));
  if (!path.startsWith(staticDir) || !existsSync(path)) return send(res, 404, 'Not Found', 'text/plain');
  return send(res, 200, readFileSync(path), types[extname(path)] ?? 'application/octet-stream');
}

createServer((req, res) => {
  let body = '';
  req.on('data', (chunk) => (body += chunk));
  req.on('end', () => {
    const url = new URL(req.url, 'http://localhost');
    for (const [key, value] of new URLSearchParams(body)) url.searchParams.set(key, value); // a POSTed form
    let path = url.pathname.replace(/^\/tb(?=\/data\/plugin\/profile)/, '');
    path = path.startsWith('/data/plugin/profile/') ? path.slice('/data/plugin/profile/'.length) : path.slice(1);
    if (api(path, url.searchParams, res) === false) serveStatic(path, res);
  });
}).listen(port, '127.0.0.1', () => console.log(`mock profile server on http://127.0.0.1:${port}/`));
