// #/function/<id>: a function's facts, its graph, dprint and rewrites.

import { h, replace } from '../util/dom.js';
import { fmtBytes, fmtInt, fmtNum, fmtTime } from '../util/format.js';
import { apiGet } from '../app/api.js';
import { mountGraphView } from '../graph/view.js';
import { dprintBlock, rewritesTable } from '../graph/details.js';
import { errorBox, loading } from './common.js';

const LIST_CAP = 12;

function fact(name, value, field) {
  return h('div', { class: 'fact', 'data-field': field }, h('div', { class: 'fact-name' }, name), h('div', { class: 'fact-value' }, value));
}

function facts(f) {
  return h('section', { class: 'card' },
    h('div', { class: 'facts' },
      fact('calls', fmtInt(f.calls), 'calls'),
      fact('source', h('span', { class: `badge source-${f.source}` }, f.source || ''), 'source'),
      fact('first use', fmtTime(f.first_use), 'first_use'),
      fact('last use', fmtTime(f.last_use), 'last_use'),
      fact('size', fmtBytes(f.bytes), 'bytes'),
      fact('compile', f.compile_ms === undefined ? '' : `${fmtNum(f.compile_ms, 2)} ms`, 'compile_ms'),
      fact('nodes', `${fmtInt(f.nodes_before)} → ${fmtInt(f.nodes_after)}`, 'nodes')),
    h('div', { class: 'signature' },
      h('div', { class: 'sig-inputs' }, h('span', { class: 'fact-name' }, 'inputs'),
        capped((f.inputs || []).map(i => h('li', {}, h('b', {}, i.name || '?'), `: ${i.type || ''}`)))),
      h('div', {}, h('span', { class: 'fact-name' }, 'outputs'),
        capped((f.outputs || []).map((o, k) => h('li', {}, h('b', {}, `#${k}`), `: ${o}`))))));
}

/** A list showing its first LIST_CAP items, with a button for the rest. */
function capped(items) {
  const ul = h('ul', { class: `plain mono${items.length > 6 ? ' columns' : ''}` }, items.slice(0, LIST_CAP));
  if (items.length <= LIST_CAP) return ul;
  const more = h('button', { type: 'button', class: 'gv-link small', onclick: () => { ul.append(...items.slice(LIST_CAP)); more.remove(); } },
    `show all ${fmtInt(items.length)}`);
  return h('div', {}, ul, more);
}

/** Renders one function into main; ctx: {alive()}; returns a cleanup function. */
export function functionView(main, ctx, id) {
  let graphView = null;
  replace(main,
    h('div', { class: 'page-head' }, h('a', { href: '#/functions', class: 'back' }, '← Functions'),
      h('h1', { class: 'mono id', title: id }, id)),
    loading());
  apiGet(`functions/${encodeURIComponent(id)}`).then(f => {
    if (!ctx.alive()) return;
    main.lastChild.remove();
    const graphBox = h('section', { class: 'card graph-card' }, h('h2', {}, 'Graph ', h('span', { class: 'muted small' }, 'as optimized (what runs)')));
    main.append(facts(f), graphBox,
      h('section', { class: 'card' }, h('h2', {}, 'dprint'), dprintBlock(f.dprint)),
      h('section', { class: 'card' }, h('h2', {}, 'Rewrites'), rewritesTable(f.rewrites)));
    graphView = mountGraphView(graphBox, f.graph || { nodes: [], edges: [] });
  }, e => {
    if (!ctx.alive()) return;
    main.lastChild.remove();
    main.append(e.status === 404
      ? h('div', { class: 'card empty', 'data-test': 'not-found' }, h('h2', {}, 'No such function'),
        h('p', { class: 'muted' }, `no such function: ${id}`), h('a', { href: '#/functions' }, 'Back to the functions'))
      : errorBox(e));
  });
  return () => { if (graphView) graphView.destroy(); };
}
