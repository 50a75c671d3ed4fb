// Standalone graph viewer: draws the JSON of <script id="kiln-graph" type="application/json">
// ({graph, dprint, title}, as the API's function detail) into <div id="kiln-viewer">. Fetches nothing.

import { h, replace } from './util/dom.js';
import { mountGraphView } from './graph/view.js';
import { dprintBlock, rewritesTable } from './graph/details.js';

/** Draws data ({graph, dprint, title, rewrites}) into element; returns the graph view. */
export function render(element, data) {
  const d = data || {};
  const title = d.title || d.id || 'Graph';
  const graphBox = h('section', { class: 'kv-graph' });
  replace(element,
    h('h1', { class: 'kv-title' }, title),
    graphBox,
    typeof d.dprint === 'string' && d.dprint ? h('section', { class: 'kv-section' }, h('h2', {}, 'dprint'), dprintBlock(d.dprint)) : null,
    Array.isArray(d.rewrites) ? h('section', { class: 'kv-section' }, h('h2', {}, 'Rewrites'), rewritesTable(d.rewrites)) : null);
  if (d.title) document.title = d.title;
  return mountGraphView(graphBox, d.graph || { nodes: [], edges: [] });
}

/** Reads #kiln-graph and draws it into #kiln-viewer (made if missing); does nothing without #kiln-graph. */
export function start() {
  const script = document.getElementById('kiln-graph');
  if (!script) return null;
  let el = document.getElementById('kiln-viewer');
  if (!el) document.body.appendChild((el = h('div', { id: 'kiln-viewer' })));
  el.classList.add('kv');
  let data = null;
  try {
    data = JSON.parse(script.textContent || 'null');
  } catch (e) {
    replace(el, h('p', { class: 'kv-error' }, `Cannot read the graph: ${e.message}`));
    return null;
  }
  if (!data) {
    replace(el, h('p', { class: 'kv-error' }, 'No graph: #kiln-graph is empty.'));
    return null;
  }
  return render(el, data);
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
else start();
