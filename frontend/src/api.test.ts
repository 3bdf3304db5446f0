import { describe, expect, it } from 'vitest';
import { ApiError, ProfileApi, TOKEN_HEADER, apiBaseFromPath, parseErrorBody, progressLine, routeUrl } from './api';

describe('apiBaseFromPath', () => {
  it('keeps any path prefix before the plugin path', () => {
    expect(apiBaseFromPath('/data/plugin/profile/index.html')).toBe('/data/plugin/profile/');
    expect(apiBaseFromPath('/tb/data/plugin/profile/index.html')).toBe('/tb/data/plugin/profile/');
    expect(apiBaseFromPath('/a/b/data/plugin/profile/')).toBe('/a/b/data/plugin/profile/');
    expect(apiBaseFromPath('/tb/data/plugin/profile')).toBe('/tb/data/plugin/profile/');
  });
  it('falls back to the root plugin path', () => {
    expect(apiBaseFromPath('/')).toBe('/data/plugin/profile/');
    expect(apiBaseFromPath('/index.html')).toBe('/data/plugin/profile/');
  });
});

describe('routeUrl', () => {
  it('encodes parameters and skips undefined ones', () => {
    expect(routeUrl('/b/', 'data', { run: 'a b/c', tag: 'trace_viewer@', host: undefined })).toBe(
      '/b/data?run=a+b%2Fc&tag=trace_viewer%40',
    );
    expect(routeUrl('/b/', 'runs')).toBe('/b/runs');
  });
});

describe('parseErrorBody', () => {
  it('reads the structured error shape', () => {
    const error = parseErrorBody(404, '{"error": {"code": "NOT_APPLICABLE", "message": "No steps"}}');
    expect(error).toMatchObject({ status: 404, code: 'NOT_APPLICABLE', message: 'No steps' });
    expect(error.notApplicable).toBe(true);
  });
  it('reads a string error and plain text', () => {
    expect(parseErrorBody(500, '{"error": "boom"}')).toMatchObject({ code: 'HTTP_500', message: 'boom' });
    expect(parseErrorBody(404, 'No Data\n')).toMatchObject({ code: 'HTTP_404', message: 'No Data' });
    expect(parseErrorBody(502, '')).toMatchObject({ message: 'Request failed with status 502' });
  });
  it('shows the title of an HTML error page', () => {
    const page = '<!doctype html>\n<html lang=en>\n<title>500 Internal Server Error</title>\n<h1>Internal</h1>';
    expect(parseErrorBody(500, page).message).toBe('500 Internal Server Error');
  });
  it('clips very long bodies', () => {
    expect(parseErrorBody(500, 'x'.repeat(2000)).message.length).toBeLessThan(600);
  });
});

function fakeFetch(routes: Record<string, [number, string]>) {
  const calls: string[] = [];
  const inits: RequestInit[] = [];
  const impl = async (url: string, init?: RequestInit) => {
    calls.push(url);
    inits.push(init ?? {});
    const path = url.split('?')[0];
    const [status, body] = routes[path] ?? [404, 'Not Found'];
    return new Response(body, { status });
  };
  return { calls, inits, impl };
}

describe('ProfileApi', () => {
  it('calls routes under the base and normalises hosts', async () => {
    const { calls, impl } = fakeFetch({
      '/p/runs': [200, '["r1", "r2"]'],
      '/p/hosts': [200, '[{"hostname": "ALL_HOSTS"}, {"hostname": "h1"}, "h2", 3]'],
    });
    const api = new ProfileApi('/p/', impl);
    expect(await api.runs()).toEqual(['r1', 'r2']);
    expect(await api.hosts('r1', 'trace_viewer@')).toEqual(['ALL_HOSTS', 'h1', 'h2']);
    expect(calls[1]).toBe('/p/hosts?run=r1&tag=trace_viewer%40');
  });
  it('sends a live page\'s token with every request and in download links', async () => {
    const { calls, impl } = fakeFetch({ '/p/runs': [200, '["r1"]'] });
    const api = new ProfileApi('/p/', impl, 'tok_en-1');
    await api.runs();
    expect(calls[0]).toBe('/p/runs?token=tok_en-1');
    expect(api.csvUrl('r1', 'framework_op_stats', 'h1')).toBe(
      '/p/data_csv?run=r1&tag=framework_op_stats&host=h1&token=tok_en-1',
    );
  });
  it('throws ApiError with the server message', async () => {
    const { impl } = fakeFetch({ '/p/data': [404, '{"error":{"code":"NOT_FOUND","message":"no run x"}}'] });
    const api = new ProfileApi('/p/', impl);
    await expect(api.toolData('x', 'overview_page', '')).rejects.toMatchObject({ code: 'NOT_FOUND', status: 404 });
  });
  it('folds capture failures into {error}', async () => {
    const { impl } = fakeFetch({ '/p/capture_token': [200, '{"token": "t"}'], '/p/capture_profile': [500, '{"error": "UNAVAILABLE"}'] });
    expect(await new ProfileApi('/p/', impl).capture({})).toEqual({ error: 'UNAVAILABLE' });
  });
  it('POSTs a capture as a form, with the token the server gave in its header', async () => {
    const { calls, inits, impl } = fakeFetch({
      '/p/capture_token': [200, '{"token": "s3cret"}'],
      '/p/capture_profile': [200, '{"job": "7"}'],
    });
    const reply = await new ProfileApi('/p/', impl).captureAsync({ service_addr: 'h:1', duration: 500, worker_list: undefined });
    expect(reply).toEqual({ job: '7' });
    expect(calls).toEqual(['/p/capture_token', '/p/capture_profile']);
    expect(inits[0].method).toBeUndefined();
    expect(inits[1].method).toBe('POST');
    expect((inits[1].headers as Record<string, string>)[TOKEN_HEADER]).toBe('s3cret');
    expect(String(inits[1].body)).toBe('service_addr=h%3A1&duration=500&async=1');
  });
  it("POSTs a live page's capture with both tokens: the access token in the URLs, the capture token in its header", async () => {
    const { calls, inits, impl } = fakeFetch({
      '/p/capture_token': [200, '{"token": "s3cret"}'],
      '/p/capture_profile': [200, '{"job": "7"}'],
    });
    const reply = await new ProfileApi('/p/', impl, 'tok_en-1').captureAsync({ service_addr: 'this-process', duration: 500 });
    expect(reply).toEqual({ job: '7' });
    expect(calls).toEqual(['/p/capture_token?token=tok_en-1', '/p/capture_profile?token=tok_en-1']);
    expect(inits[1].method).toBe('POST');
    expect((inits[1].headers as Record<string, string>)[TOKEN_HEADER]).toBe('s3cret');
    expect(String(inits[1].body)).toBe('service_addr=this-process&duration=500&async=1');
  });
  it('POSTs a cancel with the capture token, and folds a refusal into {error}', async () => {
    const { impl, calls, inits } = fakeFetch({
      '/p/capture_token': [200, '{"token": "s3cret"}'],
      '/p/capture_cancel': [200, '{"job": "7", "state": "cancelled"}'],
    });
    expect(await new ProfileApi('/p/', impl).captureCancel('7')).toEqual({ job: '7', state: 'cancelled' });
    expect(calls).toEqual(['/p/capture_token', '/p/capture_cancel']);
    expect(inits[1].method).toBe('POST');
    expect((inits[1].headers as Record<string, string>)[TOKEN_HEADER]).toBe('s3cret');
    expect(String(inits[1].body)).toBe('job=7');
    const missing = '{"error": {"code": "NOT_FOUND", "message": "No capture job \'7\'"}}';
    const { impl: gone } = fakeFetch({ '/p/capture_token': [200, '{"token": "t"}'], '/p/capture_cancel': [404, missing] });
    expect(await new ProfileApi('/p/', gone).captureCancel('7')).toEqual({ error: "No capture job '7'" });
  });

  it('shows the refusal of a capture without a valid token', async () => {
    const refusal = '{"error": {"code": "FORBIDDEN", "message": "A capture needs this server\'s token"}}';
    const { impl } = fakeFetch({ '/p/capture_token': [200, '{"token": "old"}'], '/p/capture_profile': [403, refusal] });
    expect(await new ProfileApi('/p/', impl).captureAsync({})).toEqual({ error: "A capture needs this server's token" });
  });
  it('reports network failures as ApiError', async () => {
    const api = new ProfileApi('/p/', async () => {
      throw new TypeError('offline');
    });
    await expect(api.runs()).rejects.toBeInstanceOf(ApiError);
  });
  it('builds data and CSV links', () => {
    const api = new ProfileApi('/tb/data/plugin/profile/');
    expect(api.csvUrl('run 1', 'framework_op_stats', 'h1')).toBe(
      '/tb/data/plugin/profile/data_csv?run=run+1&tag=framework_op_stats&host=h1',
    );
    expect(api.dataUrl('r', 'trace_viewer@', '')).toBe('/tb/data/plugin/profile/data?run=r&tag=trace_viewer%40');
  });
});

describe('progress while loading', () => {
  it('shows the server stage of this run and tool only', () => {
    const reply = {
      tasks: [
        { run: 'other', tool: 'overview_page', stage: 'converting', elapsed_s: 3 },
        { run: 'r/s', tool: 'overview_page', stage: 'decoding vm (1/2)', elapsed_s: 1.25 },
      ],
    };
    expect(progressLine(reply, 'r/s', 'overview_page')).toBe('decoding vm (1/2) · 1.3 s');
    expect(progressLine(reply, 'r/s', 'kernel_stats')).toBe('');
    expect(progressLine(null, 'r/s', 'overview_page')).toBe('');
  });
});
