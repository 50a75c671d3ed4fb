// Generates a function detail (API.md's GET /api/functions/{id}) with a graph of about n nodes:
// blocks of Dot22 -> add (bias through a DimShuffle view) -> Composite (inner graph) or tanh ->
// a chain exp -> log1p -> neg, with an in-place add of a skip connection every third block.
//   node dev/gen-graph.mjs 100000 > big.json

const T2 = 'TensorType(float64, (?, 128))';
const T1 = 'TensorType(float64, (128,))';
const TB = 'TensorType(float64, (1, 128))';
const T0 = 'TensorType(float64, ())';

/** A function detail of about n nodes, under the given id. */
export function generateFunction(n, id = 'generated') {
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

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop())) {
  process.stdout.write(JSON.stringify(generateFunction(Number(process.argv[2] || 100000), process.argv[3] || 'generated')));
}
