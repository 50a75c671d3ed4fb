// Calls to the server's /api/, with the access tokens kept in sessionStorage.

import { askToken } from './token.js';

const STORE = { metrics_token: 'kiln.metrics_token', tenant_token: 'kiln.tenant_token' };

/** The stored token of a kind ('metrics_token' or 'tenant_token'), or ''. */
export function getToken(kind) {
  try { return sessionStorage.getItem(STORE[kind]) || ''; } catch { return ''; }
}

/** Stores a token of a kind for this browser tab. */
export function setToken(kind, value) {
  try { sessionStorage.setItem(STORE[kind], value); } catch { /* storage off: keep none */ }
}

function headers() {
  const hd = { Accept: 'application/json' };
  const m = getToken('metrics_token'), t = getToken('tenant_token');
  if (m) hd.Authorization = `Bearer ${m}`;
  if (t) hd['X-Kiln-Token'] = t;
  return hd;
}

/** An API error carrying the HTTP status (0 when the server could not be reached). */
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** GETs api/<path> (relative to the page) as JSON; asks for a token and retries on 401; throws ApiError otherwise. */
export function apiGet(path) {
  return call(path, 'GET');
}

/** POSTs an action to api/<path> (with the X-Kiln-Action header the server asks of actions), as apiGet. */
export function apiAction(path) {
  return call(path, 'POST');
}

async function call(path, method) {
  for (;;) {
    let res;
    try {
      const hd = headers();
      if (method === 'POST') hd['X-Kiln-Action'] = '1';
      res = await fetch(`../api/${path}`, { method, headers: hd, cache: 'no-store' });
    } catch (e) {
      throw new ApiError(0, `cannot reach the server (${e.message})`);
    }
    let body = null;
    try { body = await res.json(); } catch { body = null; }
    if (res.ok) return body;
    const message = (body && body.error) || `${res.status} ${res.statusText}`;
    if (res.status !== 401) throw new ApiError(res.status, message);
    const needs = body && body.needs === 'tenant_token' ? 'tenant_token' : 'metrics_token';
    const token = await askToken(needs, message, getToken(needs));
    setToken(needs, token);
  }
}
