// The text parts shown under a graph: dprint and the rewrites table.

import { h } from '../util/dom.js';
import { fmtInt } from '../util/format.js';

/** Lines of dprint shown before a "show all" button. */
const DPRINT_LINES = 2000;

/** A <pre data-test="dprint"> with the dprint text (very long texts cut, with a button to show all). */
export function dprintBlock(text) {
  const full = typeof text === 'string' ? text : '';
  const lines = full.split('\n');
  const pre = h('pre', { class: 'dprint', 'data-test': 'dprint' });
  if (lines.length <= DPRINT_LINES) {
    pre.textContent = full;
    return pre;
  }
  pre.textContent = lines.slice(0, DPRINT_LINES).join('\n');
  const more = h('button', {
    type: 'button', class: 'gv-button', 'data-test': 'dprint-all',
    onclick: () => { pre.textContent = full; more.remove(); },
  }, `show all ${fmtInt(lines.length)} lines`);
  return h('div', {}, pre, more);
}

/** The table of rewrites ({rule, count}), or a line saying none fired. */
export function rewritesTable(rewrites) {
  const rows = Array.isArray(rewrites) ? rewrites : [];
  if (!rows.length) return h('p', { class: 'muted', 'data-test': 'rewrites' }, 'No rewrite fired.');
  return h('table', { class: 'table table-compact', 'data-test': 'rewrites' },
    h('thead', {}, h('tr', {}, h('th', {}, 'rule'), h('th', { class: 'num' }, 'count'))),
    h('tbody', {}, rows.map(r => h('tr', { 'data-test': 'rewrite-row' }, h('td', { class: 'mono' }, r.rule), h('td', { class: 'num' }, fmtInt(r.count))))));
}
