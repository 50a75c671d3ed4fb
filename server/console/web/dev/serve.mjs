// Dev server: the built console at /console/, the fixtures at /api/ (shaped as ../../API.md).
//   node dev/serve.mjs [--port 8765] [--dist DIR] [--fixtures DIR] [--metrics-token T] [--tenant-token T]
// With --metrics-token, /api/ answers 401 {"needs": "metrics_token"} unless "Authorization: Bearer T";
// with --tenant-token, 401 {"needs": "tenant_token"} unless "X-Kiln-Token: T".
// /api/functions/<id> serves fixtures/function-<id>.json, or a generated graph for the ids in GENERATED.

import http from 'node:http';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateFunction } from './gen-graph.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const port = Number(arg('port', 8765));
const dist = path.resolve(arg('dist', path.join(here, '..', 'dist')));
const fixtures = path.resolve(arg('fixtures', path.join(here, 'fixtures')));
const metricsToken = arg('metrics-token', '');
const tenantToken = arg('tenant-token', '');
const started = Date.now() / 1000;

/** Function ids answered with a generated graph of that many nodes. */
export const GENERATED = {
  b16b16b16b16b16b16b16b16b16b16b16b16b16b16b16b16b16b16b16b16b16b: 100000,
  '5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e': 3000,
};
const generated = new Map();

const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' };
const STATIC = new Set(['index.html', 'console.js', 'console.css', 'viewer.js', 'viewer.css']);

function send(res, code, body, type = 'application/json') {
  res.writeHead(code, { 'Content-Type': type, 'Cache-Control': 'no-store' });
  res.end(typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body));
}

const fixture = async name => JSON.parse(await readFile(path.join(fixtures, name), 'utf8'));

async function overview() {
  // Shift the samples so that the last one ends now.
  const d = await fixture('overview.json');
  const now = Date.now() / 1000, s = d.history.samples;
  const shift = s.length ? now - s[s.length - 1].t : 0;
  for (const x of s) x.t += shift;
  d.uptime_seconds += now - started;
  return d;
}

async function api(res, route) {
  if (route === 'overview') return send(res, 200, await overview());
  if (route === 'functions') return send(res, 200, await fixture('functions.json'));
  if (route === 'sessions') return send(res, 200, await fixture('sessions.json'));
  const m = /^functions\/([^/]+)$/.exec(route);
  if (!m) return send(res, 404, { error: `no such API: /api/${route}` });
  const id = decodeURIComponent(m[1]);
  if (GENERATED[id]) {
    if (!generated.has(id)) generated.set(id, JSON.stringify(generateFunction(GENERATED[id], id)));
    return send(res, 200, generated.get(id));
  }
  if (!/^[0-9a-f]+$/.test(id)) return send(res, 404, { error: 'no such function' });
  try {
    return send(res, 200, await readFile(path.join(fixtures, `function-${id}.json`)));
  } catch {
    return send(res, 404, { error: 'no such function' });
  }
}

const server = http.createServer(async (req, res) => {
  try {
    const url = new URL(req.url, 'http://x');
    const p = url.pathname;
    if (p === '/' || p === '/console') { res.writeHead(302, { Location: '/console/' }); return res.end(); }
    if (p.startsWith('/console/')) {
      const f = p.slice('/console/'.length) || 'index.html';
      if (!STATIC.has(f)) return send(res, 404, 'not found', 'text/plain');
      return send(res, 200, await readFile(path.join(dist, f)), TYPES[path.extname(f)]);
    }
    if (p.startsWith('/api/')) {
      if (metricsToken && req.headers.authorization !== `Bearer ${metricsToken}`) {
        return send(res, 401, { error: 'this server needs its metrics token', needs: 'metrics_token' });
      }
      if (tenantToken && req.headers['x-kiln-token'] !== tenantToken) {
        return send(res, 401, { error: 'no tenant token, or not a tenant\'s', needs: 'tenant_token' });
      }
      return await api(res, p.slice('/api/'.length));
    }
    return send(res, 404, 'not found', 'text/plain');
  } catch (e) {
    return send(res, 500, { error: String(e && e.message) });
  }
});
server.listen(port, '127.0.0.1', () => console.log(`kiln console dev server: http://127.0.0.1:${port}/console/ (dist ${dist})`));
