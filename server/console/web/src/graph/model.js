// The graph model: the API's graph JSON indexed into nodes and edges, inner graphs flattened.
//
// Every node gets a string key: its id at the top level ("12"), "<outer key>/<id>" inside the
// inner graph of a Composite/Scan/OpFromGraph node ("12/3", "12/3/0", ...). A scope is one
// graph (the top one or an inner one) with its nodes, input nodes and outputs.

/** Builds the model of an API graph ({nodes, edges, outputs}). */
export function buildModel(graph) {
  const model = { nodes: new Map(), edges: [], root: null };
  model.root = addScope(model, graph || {}, '', null);
  return model;
}

// The outputOf of the nodes that are no graph output (most): one shared empty list.
const NONE = Object.freeze([]);

function addScope(model, g, prefix, owner) {
  const scope = { key: prefix, owner, nodes: [], inputs: [], outputs: [], edges: [] };
  // This scope's nodes by API id (edges name nodes by id): an array for the usual ids
  // 0, 1, 2, ... (5 and "5" alike), a Map for any other.
  const byIndex = [], byOther = new Map();
  const slot = id => (typeof id === 'number' ? (Number.isInteger(id) && id >= 0 ? id : -1)
    : typeof id === 'string' && /^\d{1,9}$/.test(id) ? Number(id) : -1);
  const find = id => {
    const k = slot(id);
    return k >= 0 ? byIndex[k] : byOther.get(String(id));
  };
  const nodes = Array.isArray(g.nodes) ? g.nodes : [];
  for (let index = 0; index < nodes.length; index++) {
    const data = nodes[index];
    if (!data || data.id === undefined || data.id === null || find(data.id)) continue;
    const kind = data.kind || 'apply';
    const node = {
      key: prefix ? `${prefix}/${data.id}` : String(data.id), id: data.id, data, kind, index, scope,
      at: scope.nodes.length,   // position in scope.nodes
      label: data.label === undefined || data.label === null ? String(data.id) : String(data.label),
      op: data.op || '', ins: [], outs: [], inner: null, outputOf: NONE,
      unit: null, _visit: 0, _shown: null,   // its leaf unit (group.js); visible.js's memo
    };
    const k = slot(data.id);
    if (k >= 0) byIndex[k] = node;
    else byOther.set(String(data.id), node);
    model.nodes.set(node.key, node);
    scope.nodes.push(node);
    if (kind === 'input') scope.inputs.push(node);
  }
  for (const e of Array.isArray(g.edges) ? g.edges : []) {
    const from = find(e.from), to = find(e.to);
    if (!from || !to) continue;
    const edge = { from, to, output: e.output || 0, input: e.input || 0, destroyed: !!e.destroyed, view: !!e.view };
    from.outs.push(edge);
    to.ins.push(edge);
    model.edges.push(edge);
    scope.edges.push(edge);
  }
  for (const n of scope.nodes) if (n.ins.length > 1) n.ins.sort((a, b) => a.input - b.input);
  if (Array.isArray(g.outputs)) {
    g.outputs.forEach((o, k) => {
      const node = o && find(o.from);
      if (!node) return;
      scope.outputs.push({ node, output: o.output || 0 });
      if (node.outputOf === NONE) node.outputOf = [];
      node.outputOf.push(k);
    });
  } else {
    // No outputs listed: take the applies nobody reads, in order.
    for (const n of scope.nodes) if (n.kind === 'apply' && !n.outs.length) scope.outputs.push({ node: n, output: 0 });
  }
  // Recursion along the nesting of inner graphs (a few levels), not along the graph.
  for (const n of scope.nodes) {
    const inner = n.data.inner;
    if (inner && Array.isArray(inner.nodes) && inner.nodes.length) n.inner = addScope(model, inner, n.key, n);
  }
  return scope;
}

/** The inner node an edge into input `k` of an expanded node should point at. */
export function innerEntry(node, k) {
  const sc = node.inner;
  return sc.inputs[k] || sc.inputs[sc.inputs.length - 1] || sc.nodes[0];
}

/** The inner node an edge from output `k` of an expanded node should leave from, with its output index. */
export function innerExit(node, k) {
  const sc = node.inner;
  const o = sc.outputs[k] || sc.outputs[sc.outputs.length - 1];
  return o ? { node: o.node, output: o.output } : { node: sc.nodes[sc.nodes.length - 1], output: 0 };
}

/** The texts a search matches a node against: label, op and output names, lower-cased. */
export function searchText(node) {
  if (node._search === undefined) {
    const names = (node.data.outputs || []).map(o => (o && o.name) || '').join(' ');
    node._search = `${node.label}\n${node.op}\n${names}`.toLowerCase();
  }
  return node._search;
}
