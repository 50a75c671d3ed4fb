// Layout of the visible graph with dagre, top to bottom; open units are dagre clusters.
//
// dagre routes an edge spanning k ranks through k-1 dummy nodes, so a few values read all over a
// big graph (weights, shared constants) would cost it hundreds of thousands of dummies. Above
// PRUNE_MIN_BOXES boxes, an edge spanning more than LONG_SPAN ranks (as-late-as-possible ranks)
// is left out of the layout, except the one tying each box to its earliest reader, and is drawn
// afterwards as a plain curve. So are graphs with many edges per box (groups linked to many).

import { graphlib, layout } from '@dagrejs/dagre';

/** Above this many boxes the faster 'tight-tree' ranker replaces 'network-simplex'. */
export const SIMPLEX_MAX = 250;
/**
 * The same, when a chain or group is open: the frames of open chains and groups add nodes and
 * edges that make network-simplex cost seconds from about a hundred boxes on.
 */
export const SIMPLEX_MAX_GROUPED = 60;

/** The dagre ranker for vis. */
export function rankerFor(vis) {
  const grouped = vis.clusters.some(c => c.type !== 'node');
  return vis.boxes.length > (grouped ? SIMPLEX_MAX_GROUPED : SIMPLEX_MAX) ? 'tight-tree' : 'network-simplex';
}
/** Room at the top of a cluster frame for its title. */
export const CLUSTER_HEADER = 22;
/** From this many boxes on, long edges are left out of the layout. */
export const PRUNE_MIN_BOXES = 120;
/** Edges per box above which a graph of any size is pruned (aggregated edges between groups). */
export const DENSE = 3;
/** In a dense graph, the most short edges routed per box and direction (heaviest first). */
export const DENSE_KEEP = 4;
/** The longest edge (in ranks) routed by dagre in a pruned layout. */
export const LONG_SPAN = 4;

/** True when vis shows chains or groups (a view of a grouped graph). */
export function isGrouped(vis) {
  return vis.boxes.some(b => b.type !== 'node') || vis.clusters.some(c => c.type !== 'node');
}

/** The edges of vis routed by dagre (a Set), the others being drawn directly. */
export function routedEdges(vis) {
  const all = new Set(vis.edges);
  const small = vis.boxes.length < PRUNE_MIN_BOXES && vis.edges.length <= DENSE * vis.boxes.length;
  // A small view of a grouped graph is pruned too when dagre would need more dummies than boxes
  // (an input read by every piece of an open chain): a graph not grouped is kept as it was drawn.
  if (small && !isGrouped(vis)) return all;
  const outs = new Map(vis.boxes.map(b => [b.key, []]));
  for (const e of vis.edges) if (outs.has(e.from.key) && outs.has(e.to.key)) outs.get(e.from.key).push(e);
  // Topological order by iterative DFS; edges closing a cycle are ignored for ranking.
  const state = new Map(), order = [], back = new Set();
  for (const b of vis.boxes) {
    if (state.has(b.key)) continue;
    const stack = [[b.key, 0]];
    state.set(b.key, 1);
    while (stack.length) {
      const top = stack[stack.length - 1];
      const list = outs.get(top[0]);
      if (top[1] < list.length) {
        const e = list[top[1]++], w = e.to.key, s = state.get(w);
        if (s === 1) back.add(e);
        else if (!s) { state.set(w, 1); stack.push([w, 0]); }
      } else {
        state.set(top[0], 2);
        order.push(top[0]);
        stack.pop();
      }
    }
  }
  // As late as possible: a box right above its earliest reader (order is reverse topological).
  const rank = new Map();
  for (const v of order) {
    let r = 0;
    for (const e of outs.get(v)) if (!back.has(e)) r = Math.min(r, rank.get(e.to.key) - 1);
    rank.set(v, r);
  }
  if (small) {
    let dummies = 0;
    for (const [v, list] of outs) for (const e of list) dummies += Math.max(0, Math.abs(rank.get(e.to.key) - rank.get(v)) - 1);
    if (dummies <= vis.boxes.length) return all;
  }
  const keep = new Set(), short = [];
  for (const [v, list] of outs) {
    let best = null;
    for (const e of list) {
      const span = Math.abs(rank.get(e.to.key) - rank.get(v));
      if (span <= LONG_SPAN) short.push(e);
      if (!back.has(e) && (!best || span < best.span || (span === best.span && e.count > best.e.count))) best = { e, span };
    }
    if (best) keep.add(best.e);
  }
  // Short edges too, but in a dense graph only the heaviest DENSE_KEEP per box and direction.
  const dense = vis.edges.length > DENSE * vis.boxes.length;
  const nOut = new Map(), nIn = new Map();
  if (dense) short.sort((a, b) => b.count - a.count);
  for (const e of short) {
    const o = nOut.get(e.from.key) || 0, i = nIn.get(e.to.key) || 0;
    if (dense && (o >= DENSE_KEEP || i >= DENSE_KEEP) && !keep.has(e)) continue;
    keep.add(e);
    nOut.set(e.from.key, o + 1);
    nIn.set(e.to.key, i + 1);
  }
  for (const e of all) if (!outs.has(e.from.key) || !outs.has(e.to.key)) keep.add(e);
  return keep;
}

/** Up to this many boxes, the sources of an apply's inputs are ordered left to right by input index. */
export const ORDER_MAX_BOXES = 400;

/**
 * In a view of a grouped graph, constraints are dropped when their number times the number of
 * ranks passes this: dagre goes through all of them at every rank of every sweep (321 boxes of
 * the 3,000-node graph, 800 ranks: 1.5 s).
 */
export const ORDER_MAX_WORK = 20000;

// The number of ranks of the boxes joined by edges (longest path; edges closing a cycle ignored).
function rankCount(vis, edges) {
  const outs = new Map(vis.boxes.map(b => [b.key, []])), indeg = new Map(vis.boxes.map(b => [b.key, 0]));
  for (const e of edges) {
    if (!outs.has(e.from.key) || !outs.has(e.to.key) || e.from === e.to) continue;
    outs.get(e.from.key).push(e.to.key);
    indeg.set(e.to.key, indeg.get(e.to.key) + 1);
  }
  const rank = new Map(), queue = [];
  for (const [k, d] of indeg) if (!d) { queue.push(k); rank.set(k, 0); }
  let most = 0;
  for (let i = 0; i < queue.length; i++) {
    const r = rank.get(queue[i]) + 1;
    for (const w of outs.get(queue[i])) {
      if (!(rank.get(w) >= r)) rank.set(w, r);
      most = Math.max(most, r);
      indeg.set(w, indeg.get(w) - 1);
      if (!indeg.get(w)) queue.push(w);
    }
  }
  return most + 1;
}

/** dagre order constraints putting the sources of each box's inputs left to right by input index (acyclic). */
export function inputOrder(vis, routed) {
  if (vis.boxes.length > ORDER_MAX_BOXES) return [];
  const out = inputConstraints(vis, routed);
  return isGrouped(vis) && out.length * rankCount(vis, routed) > ORDER_MAX_WORK ? [] : out;
}

function inputConstraints(vis, routed) {
  const isBox = new Set(vis.boxes.map(b => b.key));
  const ins = new Map();
  for (const e of routed) {
    if (!isBox.has(e.from.key) || !isBox.has(e.to.key)) continue;
    if (!ins.has(e.to.key)) ins.set(e.to.key, []);
    ins.get(e.to.key).push(e);
  }
  const right = new Map(), out = [];
  const reaches = (a, b) => {
    const seen = new Set([a]), stack = [a];
    while (stack.length) {
      const v = stack.pop();
      if (v === b) return true;
      for (const w of right.get(v) || []) if (!seen.has(w)) { seen.add(w); stack.push(w); }
    }
    return false;
  };
  for (const list of ins.values()) {
    const srcs = [];
    for (const e of list.sort((a, b) => a.first.input - b.first.input)) if (!srcs.includes(e.from)) srcs.push(e.from);
    for (let i = 1; i < srcs.length; i++) {
      const a = srcs[i - 1], b = srcs[i];
      if (a.parent !== b.parent || reaches(b.key, a.key)) continue;
      if (!right.has(a.key)) right.set(a.key, []);
      right.get(a.key).push(b.key);
      out.push({ left: a.key, right: b.key });
    }
  }
  return out;
}

/**
 * Lays out vis ({boxes, clusters, edges}, see visible.js); size(unit) gives a box's {width, height}.
 * Returns {nodes: Map key -> {x, y, width, height} (centres), clusters: same,
 * edges: [{edge, points, direct}] (direct: not routed by dagre), width, height}.
 */
export function layoutGraph(vis, size) {
  const g = new graphlib.Graph({ compound: true, multigraph: false });
  g.setGraph({
    rankdir: 'TB', nodesep: 22, ranksep: 38, edgesep: 12, marginx: 24, marginy: 24,
    ranker: rankerFor(vis),
  });
  // An open chain: its steps in one straight column (dagre's balanced alignment would make a
  // staircase of a chain with a constant beside every step); others as before.
  if (vis.clusters.some(c => c.type === 'chain')) g.graph().align = 'UL';
  g.setDefaultEdgeLabel(() => ({}));
  const clusterKeys = new Set(vis.clusters.map(c => c.key));
  for (const c of vis.clusters) g.setNode(c.key, {});
  for (const b of vis.boxes) {
    const { width, height } = size(b);
    g.setNode(b.key, { width, height });
  }
  for (const u of [...vis.clusters, ...vis.boxes]) {
    if (u.parent && clusterKeys.has(u.parent.key)) g.setParent(u.key, u.parent.key);
  }
  // A cluster with nothing inside would be laid out as a plain point: give it a placeholder.
  for (const c of vis.clusters) {
    if (!g.children(c.key).length) {
      g.setNode(`${c.key}#empty`, { width: 60, height: 20 });
      g.setParent(`${c.key}#empty`, c.key);
    }
  }
  const routed = routedEdges(vis);
  for (const e of routed) g.setEdge(e.from.key, e.to.key, { weight: e.count > 1 ? 2 : 1 });
  layout(g, { constraints: inputOrder(vis, routed) });
  const pick = n => ({ x: n.x, y: n.y, width: n.width, height: n.height });
  const nodes = new Map(vis.boxes.map(b => [b.key, pick(g.node(b.key))]));
  const clusters = new Map(vis.clusters.map(c => {
    const n = pick(g.node(c.key));
    // Grow upwards to make room for the title.
    n.y -= CLUSTER_HEADER / 2;
    n.height += CLUSTER_HEADER;
    return [c.key, n];
  }));
  const edges = vis.edges.map(e => {
    if (routed.has(e)) return { edge: e, points: (g.edge(e.from.key, e.to.key) || {}).points || [], direct: false };
    const a = nodes.get(e.from.key), b = nodes.get(e.to.key);
    return { edge: e, direct: true, points: a && b ? [{ x: a.x, y: a.y + a.height / 2 }, { x: b.x, y: b.y - b.height / 2 }] : [] };
  });
  const gl = g.graph();
  return { nodes, clusters, edges, width: gl.width || 0, height: gl.height || 0 };
}
