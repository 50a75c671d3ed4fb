// #/sessions: each session with its variables.

import { h, replace } from '../util/dom.js';
import { fmtBytes, fmtInt, fmtShape } from '../util/format.js';
import { apiAction, apiGet } from '../app/api.js';
import { confirmButton } from './function.js';
import { errorBox, loading } from './common.js';

function sessionCard(s) {
  const vars = Array.isArray(s.variables) ? s.variables : [];
  const total = vars.reduce((n, v) => n + (v.bytes || 0), 0);
  return h('section', { class: 'card session', 'data-test': 'session-row', 'data-name': s.name },
    h('div', { class: 'session-head' },
      h('h2', { class: 'mono' }, s.name),
      s.tenant ? h('span', { class: 'badge' }, `tenant ${s.tenant}`) : null,
      h('span', { class: 'muted small' }, `${fmtInt(vars.length)} variable${vars.length === 1 ? '' : 's'} · ${fmtBytes(total)}`),
      confirmButton('Delete', 'delete-session', () =>
        apiAction(`sessions/${encodeURIComponent(s.name)}/delete`).then(() => { location.reload(); }))),
    vars.length ? h('table', { class: 'table table-compact' },
      h('thead', {}, h('tr', {}, h('th', {}, 'name'), h('th', {}, 'dtype'), h('th', {}, 'shape'), h('th', { class: 'num' }, 'bytes'))),
      h('tbody', {}, vars.map(v => h('tr', { 'data-test': 'variable-row' },
        h('td', { class: 'mono' }, v.name), h('td', {}, v.dtype), h('td', { class: 'mono' }, fmtShape(v.shape)), h('td', { class: 'num' }, fmtBytes(v.bytes))))))
      : h('p', { class: 'muted' }, 'No variable.'));
}

/** Renders the sessions into main; ctx: {alive()}; returns a cleanup function. */
export function sessionsView(main, ctx) {
  const body = h('div', {}, loading());
  replace(main, h('div', { class: 'page-head' }, h('h1', {}, 'Sessions')), body);
  apiGet('sessions').then(d => {
    if (!ctx.alive()) return;
    const list = Array.isArray(d && d.sessions) ? d.sessions : [];
    replace(body, list.length ? h('div', { class: 'sessions' }, list.map(sessionCard)) : h('p', { class: 'empty muted', 'data-test': 'empty' }, 'No session.'));
  }, e => { if (ctx.alive()) replace(body, errorBox(e)); });
  return () => {};
}
