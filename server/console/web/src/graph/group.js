// Grouping of large graphs into "units", so that no layout ever holds more than LAYOUT_LIMIT boxes.
//
// Every model node gets a leaf unit ({type: 'node'}); a node with an inner graph has that graph's
// units as children (drawn when the node is expanded). A scope (the top graph or an inner one)
// with more than LAYOUT_LIMIT nodes is grouped:
//   1. chains of applies, each the single client of the previous one and reading no other apply,
//      fold into one 'chain' unit (with the constants only they read);
//   2. if still over the limit, units of the same class (op label, then op, then kind) fold into
//      'group' units, biggest classes first, until the scope shows at most GROUP_TARGET units;
//      a group of more than BUCKET_SIZE members is split, in graph order, into sub-groups.
// Chains and groups are drawn as one box until opened. Replace this module to change the grouping.

/** The most boxes one layout may hold. */
export const LAYOUT_LIMIT = 1500;
/** The most units a grouped scope shows at first (few: a readable overview to open groups from). */
export const GROUP_TARGET = 60;
/** The most members a group shows when opened (larger ones nest sub-groups). */
export const BUCKET_SIZE = 250;

/** Builds the unit tree of a model: {root, byKey, ofNode}. */
export function buildUnits(model, limits = {}) {
  const tree = {
    root: { key: '', type: 'root', parent: null, children: [], size: 0 },
    byKey: new Map(), ofNode: new Map(), seq: 0,
    limit: limits.limit || LAYOUT_LIMIT, target: limits.target || GROUP_TARGET, bucket: limits.bucket || BUCKET_SIZE,
  };
  tree.root.children = groupScope(tree, model.root, tree.root);
  tree.root.size = model.root.nodes.length;
  return tree;
}

function groupScope(tree, scope, owner) {
  let units = scope.nodes.map(n => leaf(tree, n));
  if (units.length > tree.limit) units = foldChains(tree, scope, units);
  if (units.length > tree.limit) units = groupByClass(tree, units);
  for (const u of units) u.parent = owner;
  return units;
}

function leaf(tree, node) {
  const u = { key: node.key, type: 'node', node, parent: null, children: [], size: 1, order: node.index };
  tree.byKey.set(u.key, u);
  tree.ofNode.set(node.key, u);
  if (node.inner) u.children = groupScope(tree, node.inner, u);
  return u;
}

// The one node at the other end of a node's edges (keeping those where pick(node) holds), else null.
function single(edges, end, pick) {
  let found = null;
  for (const e of edges) {
    const n = e[end];
    if (pick && !pick(n)) continue;
    if (found && found !== n) return null;
    found = n;
  }
  return found;
}

const isApply = n => n.kind === 'apply';

function foldChains(tree, scope, units) {
  const next = new Map(), hasPrev = new Set();
  for (const a of scope.nodes) {
    if (a.kind !== 'apply') continue;
    const p = single(a.ins, 'from', isApply);
    if (!p || p.outputOf.length || single(p.outs, 'to') !== a) continue;
    next.set(p, a);
    hasPrev.add(a);
  }
  const chainOf = new Map();
  for (const head of scope.nodes) {
    if (!next.has(head) || hasPrev.has(head)) continue;
    const members = [head];
    for (let c = head; next.has(c);) members.push((c = next.get(c)));
    const chain = makeUnit(tree, 'chain', `chain:${head.key}`, members.map(n => tree.ofNode.get(n.key)));
    chain.label = `chain of ${members.length}`;
    chain.sub = members.length <= 3 ? members.map(n => n.label).join(' → ')
      : `${members[0].label} → … → ${members[members.length - 1].label}`;
    for (const n of members) chainOf.set(n, chain);
  }
  // Constants read by one chain member only go into that chain.
  for (const c of scope.nodes) {
    if (c.kind !== 'constant') continue;
    const client = single(c.outs, 'to');
    const chain = client && chainOf.get(client);
    if (!chain) continue;
    chain.children.push(tree.ofNode.get(c.key));
    chain.children.sort((a, b) => a.order - b.order);
    chainOf.set(c, chain);
  }
  for (const ch of new Set(chainOf.values())) {
    ch.size = ch.children.length;
    ch.order = ch.children[0].order;
    for (const m of ch.children) m.parent = ch;
  }
  const out = units.filter(u => !chainOf.has(u.node));
  out.push(...new Set(chainOf.values()));
  return out.sort((a, b) => a.order - b.order);
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
      const g = groupTree(tree, name, members, 0);
      g.label = `${name} ×${members.length}`;
      for (const m of members) grouped.set(m, g);
      count -= members.length - 1;
    }
    const groups = new Set(grouped.values());
    out = out.filter(u => !grouped.has(u)).concat([...groups]).sort((a, b) => a.order - b.order);
  }
  return out;
}

function groupTree(tree, name, members, from) {
  if (members.length <= tree.bucket) {
    const g = makeUnit(tree, 'group', `group:${++tree.seq}`, members);
    g.name = name;
    g.label = `${name} #${from + 1}–${from + members.length}`;
    return g;
  }
  let chunk = tree.bucket;
  while (members.length / chunk > tree.bucket) chunk *= tree.bucket;
  const parts = [];
  for (let i = 0; i < members.length; i += chunk) parts.push(groupTree(tree, name, members.slice(i, i + chunk), from + i));
  const g = makeUnit(tree, 'group', `group:${++tree.seq}`, parts);
  g.name = name;
  g.label = `${name} #${from + 1}–${from + members.length}`;
  return g;
}

function makeUnit(tree, type, key, children) {
  const u = {
    key, type, parent: null, children,
    size: children.reduce((n, c) => n + c.size, 0),
    order: Math.min(...children.map(c => c.order)),
  };
  for (const c of children) c.parent = u;
  tree.byKey.set(key, u);
  return u;
}
