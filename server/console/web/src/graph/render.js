// SVG drawing of a laid-out graph: cluster frames, edges with arrowheads, node boxes.

import { s } from '../util/dom.js';
import { boxContent, clip } from './boxes.js';

let markerSeq = 0;

/** Creates the <svg> with its arrow markers and an empty viewport group; returns {svg, viewport, marker}. */
export function createSvg() {
  const id = `gv${++markerSeq}`;
  const marker = kind => s('marker', {
    id: `${id}-${kind}`, viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 9, markerHeight: 9, markerUnits: 'userSpaceOnUse',
    orient: 'auto-start-reverse', class: `gv-arrow gv-arrow-${kind}`,
  }, s('path', { d: 'M0,0 L10,5 L0,10 z' }));
  const viewport = s('g', { class: 'gv-viewport' });
  const svg = s('svg', { class: 'gv-svg', xmlns: 'http://www.w3.org/2000/svg' },
    s('defs', {}, ['plain', 'destroyed', 'view', 'match'].map(marker)), viewport);
  return { svg, viewport, marker: kind => `url(#${id}-${kind})` };
}

/** Draws lay (layout.js) into the viewport; returns {nodes: Map key -> <g>, clusters: Map key -> <g>}. */
export function drawGraph(view, lay, vis) {
  const { viewport, marker } = view;
  const clusterLayer = s('g', { class: 'gv-clusters' });
  const edgeLayer = s('g', { class: 'gv-edges' });
  const nodeLayer = s('g', { class: 'gv-nodes' });
  const nodes = new Map(), clusters = new Map();
  for (const c of vis.clusters) {
    const b = lay.clusters.get(c.key);
    if (!b) continue;
    const g = drawCluster(c, b);
    clusters.set(c.key, g);
    clusterLayer.appendChild(g);
  }
  for (const { edge, points, direct } of lay.edges) if (points.length) edgeLayer.appendChild(drawEdge(edge, points, marker, direct));
  for (const u of vis.boxes) {
    const b = lay.nodes.get(u.key);
    if (!b) continue;
    const g = drawNode(u, b);
    nodes.set(u.key, g);
    nodeLayer.appendChild(g);
  }
  viewport.textContent = '';
  viewport.append(clusterLayer, edgeLayer, nodeLayer);
  return { nodes, clusters };
}

function badge(action, sign, x, y) {
  return s('g', { class: 'gv-badge', 'data-action': action, 'data-test': `graph-${action}`, transform: `translate(${x},${y})` },
    s('title', { text: action === 'expand' ? 'expand' : 'collapse' }),
    s('circle', { r: 7.5 }), s('text', { 'text-anchor': 'middle', y: 4, text: sign }));
}

function drawNode(u, b) {
  const c = boxContent(u);
  const w = b.width, hgt = b.height;
  const cls = ['gv-node', `gv-${c.kind}`];
  if (c.output) cls.push('gv-output');
  if (c.expandable) cls.push('gv-expandable');
  const g = s('g', {
    class: cls.join(' '), 'data-test': 'graph-node', 'data-node-id': u.key, 'data-kind': c.kind,
    transform: `translate(${b.x - w / 2},${b.y - hgt / 2})`,
  });
  const tip = c.sub ? `${c.title}\n${c.sub}` : c.title;
  g.appendChild(s('title', { text: c.output ? `${tip}\n(${u.type === 'node' ? 'graph output' : 'holds a graph output'})` : tip }));
  if (c.kind === 'chain' || c.kind === 'group') g.appendChild(s('rect', { class: 'gv-stack', x: 4, y: 4, width: w, height: hgt, rx: 6 }));
  const rx = c.kind === 'input' ? hgt / 2 : c.kind === 'constant' ? 2 : 6;
  g.appendChild(s('rect', { class: 'gv-shape', width: w, height: hgt, rx }));
  const cx = c.expandable ? (w - 14) / 2 + 2 : w / 2;
  g.appendChild(s('text', { class: 'gv-title', x: cx, y: c.sub ? 17 : 18, 'text-anchor': 'middle', text: clip(c.title) }));
  if (c.sub) g.appendChild(s('text', { class: 'gv-sub', x: cx, y: 32, 'text-anchor': 'middle', text: clip(c.sub) }));
  if (c.expandable) g.appendChild(badge('expand', '+', w - 11, hgt / 2));
  return g;
}

function drawCluster(u, b) {
  const x = b.x - b.width / 2, y = b.y - b.height / 2;
  const title = u.type === 'node' ? u.node.label : u.label;
  const kind = u.type === 'node' ? 'inner' : u.type;
  return s('g', { class: `gv-cluster gv-cluster-${kind}`, 'data-test': 'graph-cluster', 'data-node-id': u.key },
    s('rect', { x, y, width: b.width, height: b.height, rx: 8 }),
    s('text', { class: 'gv-cluster-title', x: x + 10, y: y + 15, text: clip(title, Math.max(8, Math.floor((b.width - 30) / 6.5))) },
      s('title', { text: title })),
    badge('collapse', '−', x + b.width - 12, y + 11));
}

/** The SVG path of a B-spline through dagre's points (as d3.curveBasis). */
export function splinePath(pts) {
  const f = v => Math.round(v * 10) / 10;
  if (pts.length < 3) return `M${f(pts[0].x)},${f(pts[0].y)}` + pts.slice(1).map(p => `L${f(p.x)},${f(p.y)}`).join('');
  let d = '', x0 = NaN, y0 = NaN, x1 = NaN, y1 = NaN, state = 0;
  const bez = (x, y) => {
    d += `C${f((2 * x0 + x1) / 3)},${f((2 * y0 + y1) / 3)},${f((x0 + 2 * x1) / 3)},${f((y0 + 2 * y1) / 3)},` +
      `${f((x0 + 4 * x1 + x) / 6)},${f((y0 + 4 * y1 + y) / 6)}`;
  };
  for (const { x, y } of pts) {
    if (state === 0) { state = 1; d += `M${f(x)},${f(y)}`; }
    else if (state === 1) state = 2;
    else {
      if (state === 2) { state = 3; d += `L${f((5 * x0 + x1) / 6)},${f((5 * y0 + y1) / 6)}`; }
      bez(x, y);
    }
    x0 = x1; x1 = x; y0 = y1; y1 = y;
  }
  bez(x1, y1);
  d += `L${f(x1)},${f(y1)}`;
  return d;
}

function edgeTitle(e) {
  if (e.count > 1) return `${e.count} edges`;
  const r = e.first;
  let t = `${r.from.label} → ${r.to.label} (output ${r.output} → input ${r.input})`;
  if (e.destroyed) t += '\nin-place: the apply overwrites this input';
  if (e.view) t += '\nview: the output is a view of this input';
  return t;
}

/** A vertical-tangent cubic curve from a to b (for edges not routed by the layout). */
export function directPath(a, b) {
  const f = v => Math.round(v * 10) / 10;
  const dy = Math.max(30, Math.abs(b.y - a.y) / 3);
  return `M${f(a.x)},${f(a.y)}C${f(a.x)},${f(a.y + dy)},${f(b.x)},${f(b.y - dy)},${f(b.x)},${f(b.y)}`;
}

function drawEdge(e, points, marker, direct) {
  const kind = e.destroyed ? 'destroyed' : e.view ? 'view' : 'plain';
  const cls = ['gv-edge', `gv-edge-${kind}`];
  if (e.count > 1) cls.push('gv-edge-multi');
  if (direct) cls.push('gv-edge-long');
  return s('path', {
    style: e.count > 1 ? `stroke-width:${Math.min(6, 1.3 + 0.6 * Math.log2(e.count)).toFixed(1)}px` : null,
    class: cls.join(' '), d: direct ? directPath(points[0], points[1]) : splinePath(points), 'marker-end': marker(kind),
    'data-from': e.from.key, 'data-to': e.to.key,
  }, s('title', { text: edgeTitle(e) }));
}
