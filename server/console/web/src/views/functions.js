// #/functions: the table of compiled functions, sortable, with a search box.

import { h, replace } from '../util/dom.js';
import { fmtBytes, fmtInt, fmtNum, fmtTime, shortId, shortType } from '../util/format.js';
import { apiGet } from '../app/api.js';
import { errorBox, loading } from './common.js';

/** The signature line of a function entry: "(x: float64 (?,)) → float64 (?,)". */
export function signature(f, full = false) {
  const t = full ? x => x || '' : shortType;
  const ins = (f.inputs || []).map(i => `${i.name || '?'}: ${t(i.type)}`).join(', ');
  return `(${ins}) → ${(f.outputs || []).map(t).join(', ')}`;
}

const COLUMNS = [
  { key: 'id', label: 'id', value: f => f.id, cell: f => h('a', { href: `#/function/${encodeURIComponent(f.id)}`, class: 'mono', title: f.id }, shortId(f.id)) },
  { key: 'first_use', label: 'first use', nowrap: true, value: f => f.first_use || 0, cell: f => fmtTime(f.first_use) },
  { key: 'last_use', label: 'last use', nowrap: true, value: f => f.last_use || 0, cell: f => fmtTime(f.last_use) },
  { key: 'calls', label: 'calls', num: true, value: f => f.calls || 0, cell: f => fmtInt(f.calls) },
  { key: 'source', label: 'source', value: f => f.source || '', cell: f => h('span', { class: `badge source-${f.source}` }, f.source || '') },
  { key: 'bytes', label: 'bytes', num: true, value: f => f.bytes || 0, cell: f => fmtBytes(f.bytes) },
  { key: 'compile_ms', label: 'compile', num: true, value: f => f.compile_ms || 0, cell: f => (f.compile_ms === undefined ? '' : `${fmtNum(f.compile_ms, 1)} ms`) },
  { key: 'nodes', label: 'nodes', num: true, value: f => f.nodes_after || 0, cell: f => `${fmtInt(f.nodes_before)} → ${fmtInt(f.nodes_after)}` },
  { key: 'signature', label: 'signature', value: f => signature(f), cell: f => h('span', { class: 'mono sig', title: signature(f, true) }, signature(f)) },
];

/** Renders the functions table into main; ctx: {alive()}; returns a cleanup function. */
export function functionsView(main, ctx) {
  const search = h('input', { type: 'search', class: 'search', placeholder: 'Filter by id or signature', 'data-test': 'function-search', 'aria-label': 'filter functions' });
  const countEl = h('span', { class: 'muted small', 'data-test': 'function-count' });
  const body = h('div', {}, loading());
  replace(main, h('div', { class: 'page-head' }, h('h1', {}, 'Functions'), countEl, h('span', { class: 'grow' }), search), body);

  let all = [], sort = { key: 'last_use', dir: -1 };
  const head = h('tr', {});
  const rows = h('tbody', {});

  const drawHead = () => replace(head, COLUMNS.map(c => h('th', {
    class: `${c.num ? 'num ' : ''}sortable`, 'data-sort': c.key, 'data-test': 'sort-header',
    'aria-sort': sort.key === c.key ? (sort.dir > 0 ? 'ascending' : 'descending') : 'none',
    onclick: () => { sort = { key: c.key, dir: sort.key === c.key ? -sort.dir : c.num || c.key.endsWith('_use') ? -1 : 1 }; draw(); },
  }, c.label, h('span', { class: 'sort-mark' }, sort.key === c.key ? (sort.dir > 0 ? '▲' : '▼') : ''))));

  const draw = () => {
    const q = search.value.trim().toLowerCase();
    const col = COLUMNS.find(c => c.key === sort.key);
    const shown = all.filter(f => !q || (f.id || '').toLowerCase().includes(q) || signature(f).toLowerCase().includes(q) || signature(f, true).toLowerCase().includes(q))
      .sort((a, b) => {
        const x = col.value(a), y = col.value(b);
        return sort.dir * (typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y)));
      });
    drawHead();
    replace(rows, shown.map(f => h('tr', {
      class: 'clickable', 'data-test': 'function-row', 'data-id': f.id,
      onclick: ev => { if (!ev.target.closest('a')) location.hash = `#/function/${encodeURIComponent(f.id)}`; },
    }, COLUMNS.map(c => h('td', { class: c.num ? 'num' : c.nowrap ? 'nowrap' : c.key === 'signature' ? 'sig-cell' : '' }, c.cell(f))))));
    countEl.textContent = q ? `${fmtInt(shown.length)} of ${fmtInt(all.length)}` : `${fmtInt(all.length)} function${all.length === 1 ? '' : 's'}`;
  };
  search.addEventListener('input', draw);

  apiGet('functions').then(d => {
    if (!ctx.alive()) return;
    all = Array.isArray(d && d.functions) ? d.functions : [];
    replace(body, all.length
      ? h('div', { class: 'card table-card' }, h('table', { class: 'table', 'data-test': 'functions' }, h('thead', {}, head), rows))
      : h('p', { class: 'empty muted', 'data-test': 'empty' }, 'No function compiled yet.'));
    draw();
  }, e => { if (ctx.alive()) replace(body, errorBox(e)); });
  return () => {};
}
