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

  /** Number of boxes drawn in the current state (walks the open units only). */
  boxCount() {
    let n = 0;
    const stack = [this.tree.root];
    while (stack.length) {
      for (const c of stack.pop().children) (this.isOpen(c) ? stack.push(c) : n++);
    }
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
    if (!this.open.has(u.key)) return;
    // The open units are few: look for those inside u rather than walking all of u.
    for (const k of [...this.open]) {
      if (k === u.key || isAncestorKey(this.tree, u.key, this.tree.byKey.get(k))) this.open.delete(k);
    }
  }

  /** The unit drawn for a model node: the outermost closed unit on its path, or its own unit. */
  shownUnit(nodeKey) {
    return shownOf(this, this.tree.ofNode.get(nodeKey));
  }
}

// The outermost closed unit on the path of the (leaf) unit u to the root, or u itself.
function shownOf(exp, u) {
  let shown = u;
  for (; u && u.type !== 'root'; u = u.parent) if (!exp.open.has(u.key)) shown = u;
  return shown;
}

function isAncestorKey(tree, key, u) {
  for (let a = u && u.parent; a; a = a.parent) if (a.key === key) return true;
  return false;
}

let visits = 0;

/**
 * The visible graph: {boxes: closed units drawn, clusters: open units drawn as frames, edges}.
 * Linear in the edges of the top graph and of the opened inner graphs; no recursion.
 */
export function visibleGraph(model, exp) {
  const boxes = [], clusters = [];
  // Depth first, in the children's order (as a recursive walk would go).
  const stack = [{ u: exp.tree.root, i: 0 }];
  while (stack.length) {
    const top = stack[stack.length - 1];
    if (top.i >= top.u.children.length) { stack.pop(); continue; }
    const c = top.u.children[top.i++];
    if (exp.isOpen(c)) { clusters.push(c); stack.push({ u: c, i: 0 }); } else boxes.push(c);
  }
  // The unit shown for a model node, remembered on the node for this call.
  const visit = ++visits;
  const shown = n => {
    if (n._visit !== visit) { n._visit = visit; n._shown = shownOf(exp, n.unit); }
    return n._shown;
  };
  const isOpenNode = n => n.inner && exp.open.has(n.key);
  // Edges of closed inner graphs join nodes shown as one box: only the top graph's and the
  // opened inner graphs' edges can be drawn.
  const scopes = [model.root];
  for (const k of exp.open) {
    const u = exp.tree.byKey.get(k);
    if (u && u.type === 'node' && u.node.inner) scopes.push(u.node.inner);
  }
  const merged = new Map();
  for (const scope of scopes) {
    for (const e of scope.edges) {
      let from = e.from, output = e.output, to = e.to, input = e.input;
      for (let i = 0; isOpenNode(from) && i < 32; i++) ({ node: from, output } = innerExit(from, output));
      for (let i = 0; isOpenNode(to) && i < 32; i++) to = innerEntry(to, input), input = 0;
      const a = shown(from), b = shown(to);
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
  }
  return { boxes, clusters, edges: [...merged.values()] };
}
