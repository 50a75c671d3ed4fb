// Grouping of large graphs into "units", so that no layout ever holds more than LAYOUT_LIMIT boxes.
//
// Every model node gets a leaf unit ({type: 'node'}); a node with an inner graph has that graph's
// units as children (drawn when the node is expanded). A scope (the top graph or an inner one)
// with more than LAYOUT_LIMIT nodes is grouped:
//   1. chains of applies fold into one 'chain' unit: an apply goes on the chain of the apply it
//      reads when it is that apply's only client and every computed value it reads (graph
//      inputs and constant values aside) is read by it only; the heaviest of those is the chain's
//      previous step, the others hang off the step. What only one chain reads then folds into
//      it: constants and constant expressions (a DimShuffle of a constant), lone applies, and
//      whole chains (a branch read by one step: a box beside that step), CHAIN_NEST deep at
//      most. Graph inputs never fold. A chain of more than CHAIN_BUCKET boxes holds sub-chains of
//      consecutive steps, at most CHAIN_FAN per level;
//   2. if still over the limit, units of the same class (op label, then op, then kind) fold into
//      'group' units, biggest classes first, until the scope shows at most GROUP_TARGET units;
//      a group of more than BUCKET_SIZE members is split, in graph order, into sub-groups.
// Chains and groups are drawn as one box until opened. Replace this module to change the grouping.
//
// Every step is linear or n log n in the scope's size, and no walk recurses along the graph:
// a 100,000-deep chain is a plain graph here. (Recursion follows the nesting of inner graphs.)

import { fmtInt } from '../util/format.js';

// fmtInt, but cheap for the many small numbers of chain labels.
const num = n => (n < 1000 ? String(n) : fmtInt(n));

/** The most boxes one layout may hold. */
export const LAYOUT_LIMIT = 1500;
/** The most units a grouped scope shows at first (few: a readable overview to open groups from). */
export const GROUP_TARGET = 60;
/** The most members a group shows when opened (larger ones nest sub-groups). */
export const BUCKET_SIZE = 100;
/** The most boxes a chain shows when opened (longer ones nest sub-chains)... */
export const CHAIN_BUCKET = 100;
/** ...and the most sub-chains a (sub-)chain holds. */
export const CHAIN_FAN = 50;
/** How deep chains fold into chains (a branch read by one step of a chain is a box beside it). */
export const CHAIN_NEST = 4;

/**
 * Builds the unit tree of a model: {root, byKey, ofNode}. byKey.get(key): the unit of that key;
 * ofNode.get(nodeKey): the leaf unit of a model node (also node.unit).
 */
export function buildUnits(model, limits = {}) {
  const units = new Map();   // chains and groups (leaf units hang on their model node)
  const ofNode = { get: key => { const n = model.nodes.get(key); return n ? n.unit : undefined; } };
  const tree = {
    root: { key: '', type: 'root', parent: null, children: [], size: 0 },
    byKey: { get: key => units.get(key) || ofNode.get(key), set: (key, u) => units.set(key, u) },
    ofNode, seq: 0,
    limit: limits.limit || LAYOUT_LIMIT, target: limits.target || GROUP_TARGET, bucket: limits.bucket || BUCKET_SIZE,
    chainBucket: limits.chainBucket || CHAIN_BUCKET, chainFan: limits.chainFan || CHAIN_FAN,
  };
  tree.root.children = groupScope(tree, model.root, tree.root);
  tree.root.size = model.root.nodes.length;
  return tree;
}

// Recursion here follows the nesting of inner graphs only (a few levels), not the graph.
function groupScope(tree, scope, owner) {
  let units = scope.nodes.map(n => leaf(tree, n));
  if (units.length > tree.limit) units = foldChains(tree, scope, units);
  if (units.length > tree.limit) units = groupByClass(tree, units);
  for (const u of units) u.parent = owner;
  return units;
}

function leaf(tree, node) {
  const u = { key: node.key, type: 'node', node, parent: null, children: [], size: 1, order: node.index };
  node.unit = u;
  if (node.inner) u.children = groupScope(tree, node.inner, u);
  return u;
}

/** The scope's nodes in topological order (Kahn; nodes on a cycle, if any, are left out). */
export function topoOrder(scope) {
  const pending = new Int32Array(scope.nodes.length), order = [];
  for (const n of scope.nodes) {
    pending[n.at] = n.ins.length;
    if (!n.ins.length) order.push(n);
  }
  for (let i = 0; i < order.length; i++) {
    for (const e of order[i].outs) if (--pending[e.to.at] === 0) order.push(e.to);
  }
  return order;
}

/**
 * The nodes of a scope that hold a constant value (flags by node.at): constants, and applies
 * (without inner graph) computed from constants only, as the DimShuffle broadcasting a constant.
 */
function constantLike(scope, order) {
  const isConst = new Uint8Array(scope.nodes.length);
  for (const n of order) {
    if (n.kind === 'constant') isConst[n.at] = 1;
    else if (n.kind === 'apply' && !n.inner && n.ins.length && n.ins.every(e => isConst[e.from.at])) isConst[n.at] = 1;
  }
  return isConst;
}

function foldChains(tree, scope, units) {
  const N = scope.nodes.length;
  const order = topoOrder(scope);
  const isConst = constantLike(scope, order);
  const computed = n => n.kind === 'apply' && !isConst[n.at];
  // excl: a computed value read by one node only (and no graph output); weight: its size with
  // the exclusive values it reads (the rest of the graph counts for nothing).
  const excl = new Uint8Array(N), weight = new Float64Array(N), seen = new Int32Array(N).fill(-1);
  for (const n of order) {
    if (!computed(n)) continue;
    let w = 1;
    for (const e of n.ins) {
      if (excl[e.from.at] && seen[e.from.at] !== n.at) { seen[e.from.at] = n.at; w += weight[e.from.at]; }
    }
    weight[n.at] = w;
    if (n.outputOf.length || !n.outs.length) continue;
    let one = true;
    for (const e of n.outs) if (e.to !== n.outs[0].to) { one = false; break; }
    if (one) excl[n.at] = 1;
  }
  // next[p] = a: the chain goes on from p to a when all the computed inputs of a (graph inputs
  // and constant values aside) are read by a only; p is the heaviest of them (the first at a
  // tie), the others hang off a and fold into the chain below.
  const next = new Int32Array(N).fill(-1), hasPrev = new Uint8Array(N);
  for (const a of order) {
    if (!computed(a)) continue;
    let p = null, ok = true;
    for (const e of a.ins) {
      const n = e.from;
      if (!computed(n)) continue;
      if (!excl[n.at]) { ok = false; break; }
      if (!p || weight[n.at] > weight[p.at]) p = n;
    }
    if (!ok || !p) continue;
    next[p.at] = a.at;
    hasPrev[a.at] = 1;
  }
  // The chains, heads in graph order. own[n]: the chain holding node n as a step or as a
  // folded node; lo[n]..hi[n]: the steps of that chain reading it (its own step for a step).
  const chains = [], own = new Int32Array(N).fill(-1), lo = new Int32Array(N), hi = new Int32Array(N);
  for (const head of scope.nodes) {
    if (next[head.at] < 0 || hasPrev[head.at]) continue;
    const ch = { head, members: [], extras: [], parent: -1, level: 0 };
    for (let c = head.at; c >= 0; c = next[c]) {
      lo[c] = hi[c] = ch.members.length;
      own[c] = chains.length;
      ch.members.push(scope.nodes[c]);
    }
    chains.push(ch);
  }
  // Fold into a chain what only it reads: constant values, applies, and whole chains (a chain
  // folded into another is a box beside the step reading it). Readers before what they read,
  // so in reverse topological order. Graph inputs stay out: they are the function's signature.
  // What is read from two chains stays out too, even when one holds the other: folding it into
  // the outer one would cascade, the whole graph ending folded into the chain of its output.
  // Chains nest in chains CHAIN_NEST deep at most (a chain's exit is decided before those
  // of the chains it reads, so its level is known when they fold into it).
  const fold = n => {   // {z: the chain all readers of n are in (steps or folded), l..h: their steps} or null
    let z = -1, l = Infinity, h = -1;
    for (const e of n.outs) {
      const y = own[e.to.at];
      if (y < 0 || (z >= 0 && y !== z)) return null;
      z = y;
      if (lo[e.to.at] < l) l = lo[e.to.at];
      if (hi[e.to.at] > h) h = hi[e.to.at];
    }
    return { z, l, h };
  };
  for (let i = order.length - 1; i >= 0; i--) {
    const n = order[i];
    if (n.kind === 'input' || n.outputOf.length || !n.outs.length) continue;
    const x = own[n.at];
    if (x >= 0 && chains[x].members[chains[x].members.length - 1] !== n) continue;   // a step, not the last
    const f = fold(n);
    if (!f || f.z === x) continue;
    if (x >= 0) {   // the whole chain x, unless it would nest too deep
      if (chains[f.z].level >= CHAIN_NEST) continue;
      chains[x].parent = f.z;
      chains[x].level = chains[f.z].level + 1;
      chains[f.z].extras.push({ chain: x, lo: f.l, hi: f.h });
    } else {
      own[n.at] = f.z;
      lo[n.at] = f.l;
      hi[n.at] = f.h;
      chains[f.z].extras.push({ node: n, lo: f.l, hi: f.h });
    }
  }
  // Units, folded chains before those they fold into (post-order, without recursion).
  const made = new Array(chains.length).fill(null), stack = [];
  for (let c = 0; c < chains.length; c++) if (chains[c].parent < 0) stack.push(c);
  const roots = stack.slice();
  while (stack.length) {
    const c = stack[stack.length - 1];
    const waiting = chains[c].extras.filter(x => x.chain !== undefined && !made[x.chain]);
    if (waiting.length) { for (const x of waiting) stack.push(x.chain); continue; }
    stack.pop();
    if (made[c]) continue;
    for (const x of chains[c].extras) x.unit = x.node ? x.node.unit : made[x.chain];
    made[c] = chainUnit(tree, chains[c]);
  }
  const out = [];
  for (const u of units) if (own[u.node.at] < 0) out.push(u);
  for (const c of roots) out.push(made[c]);
  return out.sort(byOrder);
}

const byOrder = (a, b) => a.order - b.order;

// "a → b → c", or "a → … → z": the labels of steps from..to of a chain.
function chainSub(members, from = 0, to = members.length - 1) {
  return to - from < 3 ? members.slice(from, to + 1).map(n => n.label).join(' → ')
    : `${members[from].label} → … → ${members[to].label}`;
}

// The unit of a chain: its steps and extras (what was folded into it, {unit, lo, hi}: the steps
// reading it) as children, or, above tree.chainBucket boxes, nested sub-chains of consecutive
// steps (each extra in the smallest sub-chain holding all its readers).
function chainUnit(tree, ch) {
  const { members } = ch, m = members.length;
  // A step reading more folded boxes than a piece may show: those go into a group.
  const few = ch.extras.length <= tree.chainBucket / 2;
  const atStep = new Map();
  for (const x of few ? [] : ch.extras) {
    if (!atStep.has(x.lo)) atStep.set(x.lo, []);
    atStep.get(x.lo).push(x);
  }
  const extras = few ? ch.extras : [];
  for (const [i, list] of atStep) {
    if (list.length <= tree.chainBucket / 2) { extras.push(...list); continue; }
    const name = `inputs of ${members[i].label}`;
    const g = groupTree(tree, name, list.map(x => x.unit).sort(byOrder));
    g.label = `${name} ×${num(list.length)}`;
    extras.push({ unit: g, lo: i, hi: Math.max(...list.map(x => x.hi)) });
  }
  const ofNode = n => n.unit, ofExtra = x => x.unit;
  const key = `chain:${ch.head.key}`;
  let unit;
  if (m + extras.length <= tree.chainBucket) {
    unit = makeUnit(tree, 'chain', key, members.map(ofNode).concat(extras.map(ofExtra)).sort(byOrder));
  } else {
    // Leaf pieces: runs of steps holding at most tree.chainBucket boxes (an extra counted at its first reader).
    const weight = new Array(m).fill(1);
    for (const x of extras) weight[x.lo]++;
    let level = [];
    for (let i = 0, start = 0, w = 0; i < m; i++) {
      if (w && w + weight[i] > tree.chainBucket) { level.push({ from: start, to: i - 1, parts: null }); start = i; w = 0; }
      w += weight[i];
      if (i === m - 1) level.push({ from: start, to: i, parts: null });
    }
    // Upper levels: at most tree.chainFan pieces each (see upperLevels).
    const levels = [level];
    for (const runs of upperLevels(level.length, tree.chainFan)) {
      const below = level;
      level = runs.map(([a, b]) => ({ from: below[a].from, to: below[b].to, parts: below.slice(a, b + 1) }));
      levels.push(level);
    }
    // pieceAt[k][step]: index of the piece of level k holding that step.
    const pieceAt = levels.map(lv => {
      const at = new Int32Array(m);
      lv.forEach((p, j) => at.fill(j, p.from, p.to + 1));
      return at;
    });
    const extrasOf = levels.map(lv => lv.map(() => []));
    const top = [];
    for (const x of extras) {
      const k = pieceAt.findIndex(at => at[x.lo] === at[x.hi]);
      if (k < 0) top.push(x);
      else extrasOf[k][pieceAt[k][x.lo]].push(x);
    }
    // Units bottom up.
    let units = null;
    levels.forEach((lv, k) => {
      units = lv.map((p, j) => {
        const kids = (k === 0 ? members.slice(p.from, p.to + 1).map(ofNode) : units.slice(p.first, p.first + p.parts.length))
          .concat(extrasOf[k][j].map(ofExtra)).sort(byOrder);
        const u = makeUnit(tree, 'chain', `${key}#${p.from + 1}-${p.to + 1}`, kids);
        u.label = `chain ${num(p.from + 1)}–${num(p.to + 1)} of ${num(m)}`;
        u.sub = chainSub(members, p.from, p.to);
        return u;
      });
      // Where each piece of the next level starts among these units.
      if (k + 1 < levels.length) {
        let first = 0;
        for (const p of levels[k + 1]) { p.first = first; first += p.parts.length; }
      }
    });
    unit = makeUnit(tree, 'chain', key, units.concat(top.map(ofExtra)).sort(byOrder));
  }
  unit.label = `chain of ${num(m)}`;
  unit.sub = chainSub(members);
  return unit;
}

const CLASS_KEYS = [
  u => (u.type === 'chain' ? 'chains' : u.node.kind === 'apply' ? u.node.label : `${u.node.kind}s`),
  u => (u.type === 'chain' ? 'chains' : u.node.kind === 'apply' ? u.node.op || u.node.label : `${u.node.kind}s`),
  u => (u.type === 'chain' ? 'chains' : u.node.kind === 'apply' ? 'applies' : `${u.node.kind}s`),
  () => 'nodes',
];

function groupByClass(tree, units) {
  let out = units, count = units.length;
  for (const keyOf of CLASS_KEYS) {
    if (count <= tree.target) break;
    const classes = new Map();
    for (const u of out) {
      if (u.type === 'group') continue;
      const k = keyOf(u);
      if (!classes.has(k)) classes.set(k, []);
      classes.get(k).push(u);
    }
    const grouped = new Map();
    for (const [name, members] of [...classes].sort((a, b) => b[1].length - a[1].length)) {
      if (count <= tree.target || members.length < 2) break;
      const g = groupTree(tree, name, members);
      g.label = `${name} ×${num(members.length)}`;
      for (const m of members) grouped.set(m, g);
      count -= members.length - 1;
    }
    const next = [], seen = new Set();
    for (const u of out) {
      const g = grouped.get(u);
      if (!g) next.push(u);
      else if (!seen.has(g)) { seen.add(g); next.push(g); }
    }
    out = next.sort(byOrder);
  }
  return out;
}

// A group of members (in graph order), nested when over tree.bucket: runs of at most tree.bucket
// consecutive members, themselves grouped as upperLevels says.
function groupTree(tree, name, members) {
  const make = (from, to, children) => {
    const g = makeUnit(tree, 'group', `group:${++tree.seq}`, children);
    return Object.assign(g, { name, label: `${name} #${num(from + 1)}–${num(to + 1)}`, from, to });
  };
  let level = balanced(members.length, tree.bucket).map(([from, to]) => make(from, to, members.slice(from, to + 1)));
  for (const runs of upperLevels(level.length, tree.bucket)) {
    const below = level;
    level = runs.map(([a, b]) => make(below[a].from, below[b].to, below.slice(a, b + 1)));
  }
  return level.length === 1 ? level[0] : make(0, members.length - 1, level);
}

// n items cut into the fewest runs of at most max, of balanced lengths: [[from, to], ...].
function balanced(n, max) {
  const runs = [], count = Math.ceil(n / max);
  for (let k = 0, from = 0; k < count; k++) {
    const to = Math.round(((k + 1) * n) / count) - 1;
    runs.push([from, to]);
    from = to + 1;
  }
  return runs;
}

// The levels to put over n pieces so that at most fan remain at the top, each level a list of
// runs over the one below: as few levels as can be, of even fan-outs (20,000 pieces under a fan
// of 100: 142 runs of about 141, not 2 of 10,000), so that every opening shows a handful of boxes.
function upperLevels(n, fan) {
  let levels = 0;
  while (fan ** (levels + 1) < n) levels++;
  const f = Math.max(2, Math.ceil(n ** (1 / (levels + 1)) - 1e-9));
  const out = [];
  for (let k = 0, count = n; k < levels; k++) {
    const runs = balanced(count, f);
    out.push(runs);
    count = runs.length;
  }
  return out;
}

function makeUnit(tree, type, key, children) {
  let size = 0, order = Infinity, output = false;
  for (const c of children) {
    size += c.size;
    if (c.order < order) order = c.order;
    if (c.output || (c.node && c.node.outputOf.length)) output = true;
  }
  // output: holds a graph output (drawn with the outputs' blue border)
  const u = { key, type, parent: null, children, size, order, output };
  for (const c of children) c.parent = u;
  tree.byKey.set(key, u);
  return u;
}
