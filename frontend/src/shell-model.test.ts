import { describe, expect, it } from 'vitest';
import { ProfileApi } from './api';
import { ShellModel, type PageLocation } from './shell-model';

function fakeServer(routes: Record<string, unknown>) {
  const calls: string[] = [];
  const api = new ProfileApi('/p/', async (url: string) => {
    calls.push(url);
    const [path, query] = url.split('?');
    const key = path.slice(3) + (query ? '?' + query : '');
    const body = routes[key] ?? routes[path.slice(3)];
    if (body === undefined) return new Response('{"error":{"code":"NOT_FOUND","message":"nope"}}', { status: 404 });
    return new Response(JSON.stringify(body), { status: 200 });
  });
  return { api, calls };
}

function fakePage(search = ''): PageLocation & { pushes: string[] } {
  const pushes: string[] = [];
  const page = {
    pushes,
    location: { search, pathname: '/', hash: '' },
    history: {
      pushState: (_s: unknown, _t: string, url?: string | URL | null) => {
        pushes.push(String(url));
        page.location.search = String(url).slice(1);
      },
      replaceState: (_s: unknown, _t: string, url?: string | URL | null) => {
        page.location.search = String(url).slice(1);
      },
    },
  };
  return page;
}

const routes = {
  runs: ['r1', 'r2'],
  config: { hideCaptureProfileButton: false },
  'run_tools?run=r1': ['overview_page', 'trace_viewer@'],
  'run_tools?run=r2': ['framework_op_stats'],
  hosts: [{ hostname: 'h1' }, { hostname: 'h2' }],
};

describe('ShellModel', () => {
  it('selects the first run, tool and host and writes them to the URL', async () => {
    const { api } = fakeServer(routes);
    const page = fakePage();
    const model = new ShellModel(api, page);
    await model.start();
    expect(model.phase).toBe('ready');
    expect(model.selection).toEqual({ run: 'r1', tool: 'overview_page', host: 'h1' });
    expect(page.location.search).toContain('run=r1');
    expect(page.pushes).toHaveLength(0);
  });

  it('honours a deep link and falls back for unknown entries', async () => {
    const { api } = fakeServer(routes);
    const model = new ShellModel(api, fakePage('?run=r1&tool=trace_viewer%40&host=h2&x=1'));
    await model.start();
    expect(model.selection).toEqual({ run: 'r1', tool: 'trace_viewer@', host: 'h2' });
    const other = new ShellModel(api, fakePage('?run=gone&tool=nope'));
    await other.start();
    expect(other.selection).toEqual({ run: 'r1', tool: 'overview_page', host: 'h1' });
    expect(other.notice).toBe('Run "gone" was not found in the log directory; showing r1.');
    expect(model.notice).toBe('');
  });

  it('says when a link names a tool or a host this run does not have, and never for a user choice', async () => {
    const { api } = fakeServer(routes);
    const tool = new ShellModel(api, fakePage('?run=r1&tool=nope'));
    await tool.start();
    expect(tool.selection.tool).toBe('overview_page');
    expect(tool.notice).toBe('The link\'s tool "nope" has no data for run r1; showing overview_page.');
    const host = new ShellModel(api, fakePage('?run=r1&tool=overview_page&host=<img src=x onerror=alert(1)>'));
    await host.start();
    expect(host.selection.host).toBe('h1');
    expect(host.notice).toBe('The link\'s host "<img src=x onerror=alert(1)>" is not in run r1; showing h1.');
    await host.selectTool('trace_viewer@');
    expect(host.notice).toBe('');
  });

  it('pushes history when the user picks a run and keeps a valid tool', async () => {
    const { api } = fakeServer(routes);
    const page = fakePage();
    const model = new ShellModel(api, page);
    await model.start();
    await model.selectRun('r2');
    expect(model.selection).toEqual({ run: 'r2', tool: 'framework_op_stats', host: 'h1' });
    expect(page.pushes).toHaveLength(1);
  });

  it('reports an empty log directory', async () => {
    const { api } = fakeServer({ ...routes, runs: [] });
    const model = new ShellModel(api, fakePage());
    await model.start();
    expect(model.phase).toBe('no-runs');
  });

  it('reports errors from the list routes', async () => {
    const { api } = fakeServer({ runs: ['r1'] });
    const model = new ShellModel(api, fakePage());
    await model.start();
    expect(model.phase).toBe('error');
    expect(model.error).toMatchObject({ code: 'NOT_FOUND', message: 'nope' });
  });

  it('ignores answers of a superseded selection', async () => {
    const { api } = fakeServer(routes);
    const model = new ShellModel(api, fakePage());
    await model.start();
    const first = model.selectRun('r2');
    const second = model.selectRun('r1');
    await Promise.all([first, second]);
    expect(model.selection.run).toBe('r1');
  });
});
