// The interactive graph view: toolbar (search, fit, zoom, count), SVG canvas, properties panel.

import { h } from '../util/dom.js';
import { fmtInt } from '../util/format.js';
import { buildModel, searchText } from './model.js';
import { buildUnits } from './group.js';
import { Expansion, visibleGraph } from './visible.js';
import { layoutGraph } from './layout.js';
import { boxSize } from './boxes.js';
import { createSvg, drawGraph } from './render.js';
import { panZoom } from './panzoom.js';
import { renderProps, clearProps } from './props.js';

/** Layouts of up to this many boxes run at once; larger ones first show a "laying out" status. */
const SYNC_LAYOUT_MAX = 250;
/** Below this scale labels are unreadable: the first view then shows the top of the graph at READABLE. */
const MIN_READABLE = 0.3, READABLE = 0.8;

function legend() {
  const item = (cls, text) => h('span', { class: 'gv-legend-item' }, h('i', { class: `gv-swatch ${cls}` }), text);
  return h('div', { class: 'gv-legend', 'aria-label': 'legend' },
    item('gv-sw-input', 'input'), item('gv-sw-constant', 'constant'), item('gv-sw-apply', 'apply'),
    item('gv-sw-output', 'graph output'), item('gv-sw-group', 'chain / group'),
    item('gv-sw-destroyed', 'in-place'), item('gv-sw-view', 'view'));
}

/** Mounts an interactive view of an API graph ({nodes, edges, outputs}) in container; returns {destroy}. */
export function mountGraphView(container, graph, opts = {}) {
  const started = performance.now();
  const model = buildModel(graph);
  const tree = buildUnits(model, opts.limits);
  const exp = new Expansion(tree);

  const search = h('input', {
    type: 'search', class: 'gv-search', 'data-test': 'graph-search', placeholder: 'Search label, op or name (Enter: next)',
    'aria-label': 'search the graph',
  });
  const matchInfo = h('span', { class: 'gv-matches', 'data-test': 'graph-matches' });
  const count = h('span', { 'data-test': 'node-count' }, '0');
  const status = h('span', { class: 'gv-status', 'data-test': 'graph-status', role: 'status' });
  const button = (text, title, onclick, test) => h('button', { type: 'button', class: 'gv-button', title, onclick, 'data-test': test }, text);
  const view = createSvg();
  const panel = h('aside', { class: 'gv-props' });
  const root = h('div', { class: 'gv', 'data-ready': 'false' },
    h('div', { class: 'gv-toolbar' },
      search, matchInfo,
      h('span', { class: 'gv-tools' },
        button('fit', 'fit the graph to the view', () => fit(), 'graph-fit'),
        button('+', 'zoom in', () => pz.zoom(1.25), 'graph-zoom-in'),
        button('−', 'zoom out', () => pz.zoom(0.8), 'graph-zoom-out')),
      h('span', { class: 'gv-count' }, count, ` of ${fmtInt(model.nodes.size)} nodes drawn`),
      status),
    legend(),
    h('div', { class: 'gv-body' }, h('div', { class: 'gv-canvas' }, view.svg), panel));
  container.appendChild(root);
  clearProps(panel);
  const pz = panZoom(view.svg, view.viewport, onClick);

  let lay = null, drawn = null, busy = false, destroyed = false, timer = null;
  let selected = null, matches = [], matchAt = 0, marked = [];

  function bounds() {
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (const b of [...lay.nodes.values(), ...lay.clusters.values()]) {
      x0 = Math.min(x0, b.x - b.width / 2); x1 = Math.max(x1, b.x + b.width / 2);
      y0 = Math.min(y0, b.y - b.height / 2); y1 = Math.max(y1, b.y + b.height / 2);
    }
    return x0 === Infinity ? { x: 0, y: 0, width: 0, height: 0 } : { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
  }

  function fit() {
    if (lay) pz.fit(bounds());
  }

  // First view: the whole graph if it is readable so, else its top at a readable scale.
  function firstView() {
    const b = bounds();
    const k = pz.fitScale(b);
    if (!k || k >= MIN_READABLE) return fit();
    // Centre on the middle box of the top row.
    const tops = [...lay.nodes.values()].map(n => ({ x: n.x, top: n.y - n.height / 2 }));
    const minTop = Math.min(...tops.map(n => n.top));
    const row = tops.filter(n => n.top < minTop + 5).sort((a, b) => a.x - b.x);
    pz.pin(row[row.length >> 1].x, minTop, pz.size().width / 2, 40, READABLE);
  }

  function boxOf(key) {
    return lay && (lay.nodes.get(key) || lay.clusters.get(key));
  }

  // Lays out and draws the visible graph; anchor: a unit key to keep at the same place on screen.
  function relayout(anchor, then) {
    const vis = visibleGraph(model, exp);
    const old = anchor && boxOf(anchor);
    const pinned = old && pz.toScreen(old.x, old.y - old.height / 2);
    const run = () => {
      if (destroyed) return;
      lay = layoutGraph(vis, boxSize);
      drawn = drawGraph(view, lay, vis);
      count.textContent = String(drawn.nodes.size);
      const now = anchor && boxOf(anchor);
      if (pinned && now) pz.pin(now.x, now.y - now.height / 2, pinned.x, pinned.y);
      else if (!pinned) firstView();
      busy = false;
      status.textContent = '';
      markMatches();
      markSelected();
      root.setAttribute('data-ready', 'true');
      if (then) then();
    };
    busy = true;
    root.setAttribute('data-ready', 'false');
    if (vis.boxes.length <= SYNC_LAYOUT_MAX) return run();
    status.textContent = `laying out ${fmtInt(vis.boxes.length)} nodes…`;
    timer = setTimeout(() => requestAnimationFrame(run), 20);
  }

  // Brings an opened cluster into view: whole (zooming out if needed and readable), else its top centre.
  function focus(key) {
    const c = lay.clusters.get(key);
    if (!c) return;
    const b = { x: c.x - c.width / 2, y: c.y - c.height / 2, width: c.width, height: c.height };
    const k0 = pz.scale(), k = pz.fitScale(b, k0), size = pz.size();
    if (k >= k0) {
      const a = pz.toScreen(b.x, b.y), z = pz.toScreen(b.x + b.width, b.y + b.height);
      if (a.x < 0 || a.y < 0 || z.x > size.width || z.y > size.height) pz.centre(c.x, c.y, 0);
    } else if (k >= MIN_READABLE) pz.fit(b, k);
    else pz.pin(c.x, b.y, size.width / 2, 40, READABLE);
  }

  function toggle(u) {
    if (busy) return;
    if (exp.isOpen(u)) {
      exp.collapse(u);
      relayout(u.key, () => selected === u && select(u));
    } else if (exp.expand(u)) {
      relayout(u.key, () => {
        focus(u.key);
        if (selected === u) select(u);
      });
    } else {
      status.textContent = `cannot open: more than ${fmtInt(tree.limit)} nodes would be drawn`;
    }
  }

  function goto(nodeKey, centre = true) {
    const u = tree.ofNode.get(nodeKey);
    if (!u || busy) return;
    const show = () => {
      select(u);
      const b = boxOf(u.key);
      if (centre && b) pz.centre(b.x, b.y);
    };
    if (exp.shownUnit(nodeKey) === u || u.parent.type === 'root') return show();
    if (!exp.expand(u.parent)) {
      status.textContent = `cannot open: more than ${fmtInt(tree.limit)} nodes would be drawn`;
      return;
    }
    relayout(null, show);
  }

  function select(u) {
    selected = u;
    markSelected();
    renderProps(panel, u, { goto, toggle, isOpen: x => exp.isOpen(x), close: deselect });
  }

  function deselect() {
    selected = null;
    markSelected();
    clearProps(panel);
  }

  function markSelected() {
    if (!drawn) return;
    for (const el of view.viewport.querySelectorAll('.gv-selected, .gv-edge-sel')) el.classList.remove('gv-selected', 'gv-edge-sel');
    if (!selected) return;
    const el = drawn.nodes.get(selected.key) || drawn.clusters.get(selected.key);
    if (el) el.classList.add('gv-selected');
    const k = CSS.escape(selected.key);
    for (const p of view.viewport.querySelectorAll(`[data-from="${k}"], [data-to="${k}"]`)) p.classList.add('gv-edge-sel');
  }

  function markMatches() {
    for (const el of marked) el.classList.remove('gv-match');
    marked = [];
    if (!drawn) return;
    for (const n of matches) {
      const u = exp.shownUnit(n.key);
      const el = u && (drawn.nodes.get(u.key) || drawn.clusters.get(u.key));
      if (el && !el.classList.contains('gv-match')) { el.classList.add('gv-match'); marked.push(el); }
    }
  }

  function runSearch() {
    const q = search.value.trim().toLowerCase();
    matches = q ? [...model.nodes.values()].filter(n => searchText(n).includes(q)) : [];
    matchAt = 0;
    markMatches();
    matchInfo.textContent = q ? (matches.length ? `${fmtInt(matches.length)} match${matches.length > 1 ? 'es' : ''}` : 'no match') : '';
    if (matches.length) {
      const b = boxOf(exp.shownUnit(matches[0].key).key);
      if (b) pz.centre(b.x, b.y);
    }
  }

  let searchTimer = null;
  search.addEventListener('input', () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(runSearch, model.nodes.size > 5000 ? 200 : 60);
  });
  search.addEventListener('keydown', ev => {
    if (ev.key !== 'Enter' || !matches.length) return;
    ev.preventDefault();
    matchAt = (matchAt + (ev.shiftKey ? matches.length - 1 : 1)) % matches.length;
    matchInfo.textContent = `${fmtInt(matchAt + 1)} / ${fmtInt(matches.length)}`;
    goto(matches[matchAt].key);
  });

  function onClick(target) {
    const nodeEl = target.closest && target.closest('[data-test=graph-node], [data-test=graph-cluster]');
    if (!nodeEl || busy) return;
    const u = tree.byKey.get(nodeEl.getAttribute('data-node-id'));
    if (!u) return;
    if (target.closest('.gv-badge') || (u.type !== 'node' && !exp.isOpen(u))) toggle(u);
    else select(u);
  }

  relayout(null, () => {
    root.setAttribute('data-ready-ms', String(Math.round(performance.now() - started)));
    root.setAttribute('data-ready-at', String(Math.round(performance.now())));
    if (opts.onReady) opts.onReady(performance.now() - started);
  });

  return {
    /** The root element of the view. */
    element: root,
    /** Removes the view and its listeners. */
    destroy() {
      destroyed = true;
      clearTimeout(timer);
      clearTimeout(searchTimer);
      pz.destroy();
      root.remove();
    },
  };
}
