// Generates a function detail (API.md's GET /api/functions/{id}) of one of three shapes:
//   blocks (about n nodes): blocks of Dot22 -> add (bias through a DimShuffle view) -> Composite
//     (inner graph) or tanh -> a chain exp -> log1p -> neg, with an in-place add of a skip
//     connection every third block;
//   chain (n steps deep, 2n + 1 nodes): x, then alternately Elemwise{add}(prev, TensorConstant{0.5})
//     and Elemwise{mul}(prev, TensorConstant{1.0001}), a constant node per apply (as kiln-server
//     returns `y = x; y = y + 0.5; y = y * 1.0001; ...` compiled without rewrites);
//   wide (n branches, 6n + 2 nodes): Sum(exp(z * DimShuffle{x}(c_i))) for i < n, summed by a chain
//     of n adds (as kiln-server returns `sum(exp(z * float(i)).sum() for i in range(n))`).
// The dprint is made up in kiln-server's way: depth-capped, cut at 2 MB.
//   node dev/gen-graph.mjs [--shape blocks|chain|wide] N [id] > big.json

const T2 = 'TensorType(float64, (?, 128))';
const T1 = 'TensorType(float64, (128,))';
const TB = 'TensorType(float64, (1, 128))';
const T0 = 'TensorType(float64, ())';

/** The shapes generateFunction knows. */
export const SHAPES = ['blocks', 'chain', 'wide'];

/** A function detail of the given shape and size (see above), under the given id. */
export function generateFunction(n, id = 'generated', shape = 'blocks') {
  if (shape === 'chain') return chainFunction(n, id);
  if (shape === 'wide') return wideFunction(n, id);
  if (shape !== 'blocks') throw new Error(`unknown shape ${shape} (${SHAPES.join(', ')})`);
  const nodes = [], edges = [], dprint = [];
  const add = (kind, label, extra = {}) => {
    const node = { id: nodes.length, kind, label, ...extra };
    nodes.push(node);
    return node.id;
  };
  const apply = (label, op, ins, type, props = {}, flags = {}, inner = null) => {
    const id = add('apply', label, { op, props, outputs: [{ name: '', type, shape: type === T0 ? [] : type === TB ? [1, 128] : [null, 128] }], inner });
    ins.forEach((from, i) => edges.push({ from, output: 0, to: id, input: i, destroyed: !!(flags.destroyed && flags.destroyed.includes(i)), view: !!(flags.view && flags.view.includes(i)) }));
    dprint.push(`${label} [id ${id}]`);
    return id;
  };
  const x = add('input', 'x', { type: 'TensorType(float64, (?, 128))' });
  const params = [];
  for (let k = 0; k < 32; k++) {
    params.push({ W: add('input', `W${k}`, { type: 'TensorType(float64, (128, 128))' }), b: add('input', `b${k}`, { type: T1 }) });
  }
  let h = x, block = 0;
  const recent = [];
  while (nodes.length < n - 12) {
    const p = params[block % params.length];
    const d = apply('Dot22', 'Dot22', [h, p.W], T2);
    const bv = apply('InplaceDimShuffle{x,0}', 'DimShuffle', [p.b], TB, { input_order: ['x', 0], inplace: true }, { view: [0] });
    const a = apply('Elemwise{add,no_inplace}', 'Elemwise', [d, bv], T2, { scalar_op: 'add' });
    let c;
    if (block % 5 === 0) {
      const half = add('constant', '0.5', { type: T0 });
      const inner = {
        nodes: [
          { id: 0, kind: 'input', label: 'i0', type: 'ScalarType(float64)' },
          { id: 1, kind: 'input', label: 'i1', type: 'ScalarType(float64)' },
          { id: 2, kind: 'apply', label: 'mul', op: 'Mul', props: {}, outputs: [{ name: '', type: 'ScalarType(float64)', shape: [] }], inner: null },
          { id: 3, kind: 'apply', label: 'tanh', op: 'Tanh', props: {}, outputs: [{ name: '', type: 'ScalarType(float64)', shape: [] }], inner: null },
        ],
        edges: [
          { from: 0, output: 0, to: 2, input: 0, destroyed: false, view: false },
          { from: 1, output: 0, to: 2, input: 1, destroyed: false, view: false },
          { from: 2, output: 0, to: 3, input: 0, destroyed: false, view: false },
        ],
        outputs: [{ from: 3, output: 0 }],
      };
      c = apply('Composite{tanh((i0 * i1))}', 'Elemwise', [a, half], T2, { scalar_op: 'Composite{tanh((i0 * i1))}' }, {}, inner);
    } else {
      c = apply('Elemwise{tanh,no_inplace}', 'Elemwise', [a], T2, { scalar_op: 'tanh' });
    }
    const e1 = apply('Elemwise{exp,no_inplace}', 'Elemwise', [c], T2, { scalar_op: 'exp' });
    const e2 = apply('Elemwise{log1p,no_inplace}', 'Elemwise', [e1], T2, { scalar_op: 'log1p' });
    let e3 = apply('Elemwise{neg,no_inplace}', 'Elemwise', [e2], T2, { scalar_op: 'neg' });
    if (block % 3 === 2 && recent.length >= 3) {
      e3 = apply('Elemwise{add,inplace}', 'Elemwise', [e3, recent[recent.length - 3]], T2, { scalar_op: 'add', inplace_pattern: { 0: 0 } }, { destroyed: [0] });
    }
    recent.push(e3);
    if (recent.length > 4) recent.shift();
    h = e3;
    block++;
  }
  const out = apply('Sum{acc_dtype=float64}', 'Sum', [h], T0, { axis: null, acc_dtype: 'float64' });
  const nApply = nodes.filter(v => v.kind === 'apply').length;
  return {
    id, first_use: 1700000000.0, last_use: 1700000600.0, calls: 3, source: 'compiled', bytes: nodes.length * 180,
    compile_ms: nodes.length * 0.05, nodes_before: Math.round(nodes.length * 1.4), nodes_after: nodes.length,
    inputs: [{ name: 'x', type: 'TensorType(float64, (?, 128))' }].concat(params.flatMap((p, k) => [
      { name: `W${k}`, type: 'TensorType(float64, (128, 128))' }, { name: `b${k}`, type: T1 }])),
    outputs: [T0],
    graph: { nodes, edges, outputs: [{ from: out, output: 0 }] },
    dprint: dprint.reverse().join('\n'),
    rewrites: [{ rule: 'constant_folding', count: nApply >> 4 }, { rule: 'local_elemwise_fusion', count: nApply >> 3 }],
  };
}

const S64 = 'TensorType(float64, ())', S32 = 'TensorType(float32, ())', V64 = 'TensorType(float64, (?,))';

// A graph builder: nodes and edges in the API's form, ids in creation order.
function builder() {
  const nodes = [], edges = [];
  const node = (kind, label, type) => {
    const shape = type === V64 ? [null] : type === 'TensorType(float32, (1,))' ? [1] : [];
    nodes.push({ id: nodes.length, kind, label, type, shape });
    return nodes.length - 1;
  };
  const apply = (label, op, props, ins, type, view = false) => {
    const id = nodes.length;
    const shape = type === V64 ? [null] : type === 'TensorType(float32, (1,))' ? [1] : [];
    nodes.push({ id, kind: 'apply', label, op, props, outputs: [{ name: '', type, shape }], inner: null });
    ins.forEach((from, i) => edges.push({ from, output: 0, to: id, input: i, destroyed: false, view }));
    return id;
  };
  return { nodes, edges, node, apply };
}

/** The n-deep chain of adds and muls, a constant per apply. */
function chainFunction(n, id) {
  const b = builder();
  let y = b.node('input', 'x', S64);
  for (let i = 0; i < n; i++) {
    if (i % 2 === 0) {
      const c = b.node('constant', 'TensorConstant{0.5}', S32);
      y = b.apply('Elemwise{add,no_inplace}', 'Elemwise', { scalar_op: 'add' }, [y, c], S64);
    } else {
      const c = b.node('constant', 'TensorConstant{1.0001}', S64);
      y = b.apply('Elemwise{mul,no_inplace}', 'Elemwise', { scalar_op: 'mul' }, [y, c], S64);
    }
  }
  return detail(id, b, y, [{ name: 'x', type: S64 }], S64);
}

/** n branches Sum(exp(z * DimShuffle{x}(c_i))) summed by a chain of adds. */
function wideFunction(n, id) {
  const b = builder();
  const z = b.node('input', 'z', V64);
  let acc = null;
  for (let i = 0; i < n; i++) {
    const c = b.node('constant', `TensorConstant{${i}.0}`, S32);
    const ds = b.apply('InplaceDimShuffle{x}', 'DimShuffle', { input_broadcastable: [], new_order: [-1], inplace: 1 },
      [c], 'TensorType(float32, (1,))', true);
    const m = b.apply('Elemwise{mul,no_inplace}', 'Elemwise', { scalar_op: 'mul' }, [z, ds], V64);
    const e = b.apply('Elemwise{exp,no_inplace}', 'Elemwise', { scalar_op: 'exp' }, [m], V64);
    const s = b.apply('Sum{acc_dtype=float64}', 'CAReduce', { reduce: 'sum', acc_dtype: 'float64' }, [e], S64);
    if (acc === null) acc = b.node('constant', 'TensorConstant{0}', 'TensorType(int8, ())');
    acc = b.apply('Elemwise{add,no_inplace}', 'Elemwise', { scalar_op: 'add' }, [acc, s], S64);
  }
  return detail(id, b, acc, [{ name: 'z', type: V64 }], S64);
}

function detail(id, b, out, inputs, outType) {
  const nApply = b.nodes.filter(v => v.kind === 'apply').length;
  return {
    id, first_use: 1700000000.0, last_use: 1700000600.0, calls: 0, source: 'compiled', bytes: b.nodes.length * 110,
    compile_ms: nApply * 0.004, nodes_before: nApply, nodes_after: nApply, inputs, outputs: [outType],
    graph: { nodes: b.nodes, edges: b.edges, outputs: [{ from: out, output: 0 }] },
    dprint: dprintText(b.nodes, b.edges, out), rewrites: [],
  };
}

/** dprint text as kiln-server makes it: depth first from the output, a subtree deeper than 100 printed again on its own, cut at 2 MB. */
export function dprintText(nodes, edges, out, maxBytes = 2 * 1024 * 1024) {
  const ins = nodes.map(() => []);
  for (const e of edges) ins[e.to][e.input] = e.from;
  const step = [];   // an apply's place among the applies (kiln-server prints it after the id)
  nodes.forEach((v, i) => { step[i] = v.kind === 'apply' ? (step.count = (step.count || 0) + 1) - 1 : -1; });
  const name = k => { let s = ''; for (k++; k > 0; k = Math.floor((k - 1) / 26)) s = String.fromCharCode(65 + ((k - 1) % 26)) + s; return s; };
  const ids = new Map();
  const idOf = v => { if (!ids.has(v)) ids.set(v, name(ids.size)); return ids.get(v); };
  const lines = [];
  let bytes = 0, total = 0;
  const roots = [out];
  for (let r = 0; r < roots.length; r++) {
    const stack = [[roots[r], 0]];
    while (stack.length) {
      const [v, d] = stack.pop();
      const node = nodes[v], deep = d >= 100 && ins[v].length;
      const line = `${' |'.repeat(d)}${node.label} [id ${idOf(v)}]${node.kind === 'apply' ? ` ${step[v]}` : ''}${deep ? ' ...' : ''}`;
      total += line.length + 1;
      if (bytes + line.length + 1 <= maxBytes) { lines.push(line); bytes += line.length + 1; }
      else if (total > 4 * maxBytes) { roots.length = 0; break; }
      if (deep) roots.push(v);
      else for (let i = ins[v].length - 1; i >= 0; i--) stack.push([ins[v][i], d + 1]);
    }
  }
  if (total > maxBytes) lines.push(`... (${total} bytes in all: kiln.dprint(f) prints the whole)`);
  return lines.join('\n') + '\n';
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop())) {
  const argv = process.argv.slice(2);
  const si = argv.indexOf('--shape');
  const shape = si >= 0 ? argv.splice(si, 2)[1] : 'blocks';
  process.stdout.write(JSON.stringify(generateFunction(Number(argv[0] || 100000), argv[1] || 'generated', shape)));
}
