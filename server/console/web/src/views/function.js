// #/function/<id>: a function's facts, its graph, dprint and rewrites.

import { h, replace } from '../util/dom.js';
import { fmtBytes, fmtInt, fmtNum, fmtTime } from '../util/format.js';
import { apiAction, apiGet } from '../app/api.js';
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

/** A button asking once more before it acts: the first click arms it, the second runs act(). */
export function confirmButton(label, testId, act) {
  const button = h('button', { type: 'button', class: 'gv-button danger', 'data-test': testId });
  button.textContent = label;
  button.onclick = () => {
    if (button.dataset.armed !== 'true') {
      button.dataset.armed = 'true';
      button.textContent = `${label}: click again to confirm`;
      return;
    }
    button.disabled = true;
    act().catch(e => { button.disabled = false; button.textContent = `${label} failed: ${e.message}`; });
  };
  return button;
}

/** The two views of the graph: as optimized (what runs) and as the client built it. */
function graphSwitch(id, f, show) {
  const tabs = [['optimized', 'as optimized (what runs)'], ['built', 'as built']];
  const bar = h('span', { class: 'graph-switch' });
  const select = which => {
    for (const b of bar.children) b.classList.toggle('active', b.dataset.graph === which);
    if (which === 'optimized') return show(f.graph, f.dprint);
    return apiGet(`functions/${encodeURIComponent(id)}/built`).then(b => show(b.graph, b.dprint));
  };
  for (const [which, label] of tabs) {
    if (which === 'built' && !f.has_built) continue;
    bar.append(h('button', { type: 'button', class: `gv-link small${which === 'optimized' ? ' active' : ''}`,
      'data-test': `graph-${which}`, 'data-graph': which, onclick: () => select(which) }, label));
  }
  return bar;
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
    const graphHolder = h('div', {}), dprintHolder = h('div', {});
    const show = (graph, dprint) => {
      if (graphView) graphView.destroy();
      replace(graphHolder);
      graphView = mountGraphView(graphHolder, graph || { nodes: [], edges: [] });
      replace(dprintHolder, dprintBlock(dprint));
    };
    const evict = confirmButton('Evict from memory', 'evict', () =>
      apiAction(`functions/${encodeURIComponent(id)}/evict`).then(() => { location.hash = '#/functions'; }));
    main.append(facts(f), h('div', { class: 'actions' }, evict),
      h('section', { class: 'card graph-card' }, h('h2', {}, 'Graph ', graphSwitch(id, f, show)), graphHolder),
      h('section', { class: 'card' }, h('h2', {}, 'dprint'), dprintHolder),
      h('section', { class: 'card' }, h('h2', {}, 'Rewrites'), rewritesTable(f.rewrites)));
    show(f.graph, f.dprint);
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
