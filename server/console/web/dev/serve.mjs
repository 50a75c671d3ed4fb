// Dev server: the built console at /console/, the fixtures at /api/ (shaped as ../../API.md).
//   node dev/serve.mjs [--port 8765] [--dist DIR] [--fixtures DIR] [--metrics-token T] [--tenant-token T]
//                      [--graph ID=FILE ...]
// With --metrics-token, /api/ answers 401 {"needs": "metrics_token"} unless "Authorization: Bearer T";
// with --tenant-token, 401 {"needs": "tenant_token"} unless "X-Kiln-Token: T".
// /api/functions/<id> serves fixtures/function-<id>.json, or a generated graph for the ids in GENERATED,
// or FILE for an id given by --graph ID=FILE (repeatable; for big real answers kept out of git).

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
const files = new Map();
process.argv.forEach((a, i) => {
  if (a !== '--graph') return;
  const [id, ...file] = String(process.argv[i + 1]).split('=');
  files.set(id, path.resolve(file.join('=')));
});

/** Function ids answered with a generated graph: [size, shape] (dev/gen-graph.mjs). */
export const GENERATED = {
  b16b16b16b16b16b16b16b16b16b16b16b16b16b16b16b16b16b16b16b16b16b: [100000, 'blocks'],
  '5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e': [3000, 'blocks'],
  // 100,000 steps deep: 200,001 nodes
  c4a1c4a1c4a1c4a1c4a1c4a1c4a1c4a1c4a1c4a1c4a1c4a1c4a1c4a1c4a1c4a1: [100000, 'chain'],
  // 20,000 branches: 120,002 nodes
  '3d1e3d1e3d1e3d1e3d1e3d1e3d1e3d1e3d1e3d1e3d1e3d1e3d1e3d1e3d1e3d1e': [20000, 'wide'],
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
  if (files.has(id)) return send(res, 200, await readFile(files.get(id)));
  if (GENERATED[id]) {
    if (!generated.has(id)) generated.set(id, JSON.stringify(generateFunction(GENERATED[id][0], id, GENERATED[id][1])));
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
