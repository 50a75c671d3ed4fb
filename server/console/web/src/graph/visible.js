// Which units are open, and the graph of boxes and edges that this makes visible.

import { innerEntry, innerExit } from './model.js';

/** The open/closed state of the units of a tree, keeping the number of boxes under tree.limit. */
export class Expansion {
  constructor(tree) {
    this.tree = tree;
    this.open = new Set();   // unit keys, in the order opened
  }

  /** True when the unit is drawn as its children (the root always is). */
  isOpen(u) {
    return u.type === 'root' || this.open.has(u.key);
  }

  /** Number of boxes drawn in the current state. */
  boxCount() {
    let n = 0;
    const walk = u => { for (const c of u.children) (this.isOpen(c) ? walk(c) : n++); };
    walk(this.tree.root);
    return n;
  }

  /** Opens u (and its ancestors), closing the earliest opened others if the limit would be passed; false if impossible. */
  expand(u) {
    const chain = [];
    for (let a = u; a && a.type !== 'root'; a = a.parent) chain.push(a);
    const keep = new Set(chain.map(a => a.key));
    const before = new Set(this.open);
    for (const a of chain.reverse()) if (a.children.length) this.open.add(a.key);
    for (const k of before) {
      if (this.boxCount() <= this.tree.limit) break;
      if (!keep.has(k) && this.open.has(k) && !isAncestorKey(this.tree, k, u)) this.collapse(this.tree.byKey.get(k));
    }
    if (this.boxCount() > this.tree.limit) { this.open = before; return false; }
    return true;
  }

  /** Closes u and everything open inside it. */
  collapse(u) {
    const walk = x => { this.open.delete(x.key); x.children.forEach(walk); };
    if (this.open.has(u.key)) walk(u);
  }

  /** The unit drawn for a model node: the outermost closed unit on its path, or its own unit. */
  shownUnit(nodeKey) {
    let u = this.tree.ofNode.get(nodeKey), shown = u;
    for (; u && u.type !== 'root'; u = u.parent) if (!this.open.has(u.key)) shown = u;
    return shown;
  }
}

function isAncestorKey(tree, key, u) {
  for (let a = u.parent; a; a = a.parent) if (a.key === key) return true;
  return false;
}

/** The visible graph: {boxes: closed units drawn, clusters: open units drawn as frames, edges}. */
export function visibleGraph(model, exp) {
  const boxes = [], clusters = [];
  const walk = u => {
    for (const c of u.children) {
      if (exp.isOpen(c)) { clusters.push(c); walk(c); } else boxes.push(c);
    }
  };
  walk(exp.tree.root);
  const cache = new Map();
  const shown = key => {
    let u = cache.get(key);
    if (u === undefined) cache.set(key, (u = exp.shownUnit(key)));
    return u;
  };
  const isOpenNode = n => n.inner && exp.open.has(n.key);
  const merged = new Map();
  for (const e of model.edges) {
    let from = e.from, output = e.output, to = e.to, input = e.input;
    for (let i = 0; isOpenNode(from) && i < 32; i++) ({ node: from, output } = innerExit(from, output));
    for (let i = 0; isOpenNode(to) && i < 32; i++) to = innerEntry(to, input), input = 0;
    const a = shown(from.key), b = shown(to.key);
    if (!a || !b || a === b) continue;
    const k = `${a.key}>${b.key}`;
    const m = merged.get(k);
    if (m) {
      m.count++;
      m.destroyed = m.destroyed && e.destroyed;
      m.view = m.view && e.view;
    } else {
      merged.set(k, { key: k, from: a, to: b, count: 1, destroyed: e.destroyed, view: e.view, first: e });
    }
  }
  return { boxes, clusters, edges: [...merged.values()] };
}
