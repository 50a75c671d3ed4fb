// ONNX Runtime (onnxruntime-node, CPU, one intra-op thread) on ONNX's backend test cases, checked
// as tests/conformance/onnx checks Kiln: test_data_set_0's inputs, its outputs compared at rtol
// 1e-3, atol 1e-7 with equal dtypes and shapes (integers exactly, NaN equal to NaN). Writes
// {"<kind>/<case>": "pass" | "mismatch" | "error" | "unsupported", ...} as JSON to stdout;
// "unsupported": a value ONNX Runtime's Node API cannot hold (sequences, optionals, bfloat16,
// complex). Usage: node ort_cases.js <data folder> [case-substring]
'use strict';
const fs = require('fs');
const path = require('path');
const protobuf = require('protobufjs');
const ort = require('onnxruntime-node');

const ONNX_PROTO = '/usr/include/onnx/onnx.proto';  // Debian's libonnx-dev
const RTOL = 1e-3, ATOL = 1e-7;

// TensorProto.DataType -> [ort type, typed array, field holding the values when not raw_data]
const TYPES = {
  1: ['float32', Float32Array, 'floatData'], 2: ['uint8', Uint8Array, 'int32Data'],
  3: ['int8', Int8Array, 'int32Data'], 4: ['uint16', Uint16Array, 'int32Data'],
  5: ['int16', Int16Array, 'int32Data'], 6: ['int32', Int32Array, 'int32Data'],
  7: ['int64', BigInt64Array, 'int64Data'], 8: ['string', Array, 'stringData'],
  9: ['bool', Uint8Array, 'int32Data'], 10: ['float16', Uint16Array, 'int32Data'],
  11: ['float64', Float64Array, 'doubleData'], 12: ['uint32', Uint32Array, 'uint64Data'],
  13: ['uint64', BigUint64Array, 'uint64Data'],
};

function toTensor(TensorProto, file) {
  const t = TensorProto.decode(fs.readFileSync(file));
  const spec = TYPES[t.dataType];
  if (!spec) throw new Error('unsupported element type ' + t.dataType);
  const [type, Typed, field] = spec;
  const dims = t.dims.map(Number);
  let data;
  if (type === 'string') {
    data = t.stringData.map((b) => Buffer.from(b).toString('utf8'));
  } else if (t.rawData && t.rawData.length) {
    const raw = Buffer.from(t.rawData);
    const copy = new ArrayBuffer(raw.length);
    new Uint8Array(copy).set(raw);
    data = new Typed(copy);
  } else {
    const values = t[field] || [];
    data = Typed.from(values, (v) => (Typed === BigInt64Array || Typed === BigUint64Array
                                      ? BigInt(v.toString()) : Number(v)));
  }
  return new ort.Tensor(type, data, dims);
}

function numbers(tensor) {
  if (tensor.type === 'float16') {  // the bits, as numbers
    return Array.from(tensor.data, (h) => {
      const s = h >> 15 ? -1 : 1, e = (h >> 10) & 31, f = h & 1023;
      if (e === 0) return s * f * 2 ** -24;
      if (e === 31) return f ? NaN : s * Infinity;
      return s * (1 + f / 1024) * 2 ** (e - 15);
    });
  }
  return Array.from(tensor.data, Number);
}

function compare(got, want) {
  if (got.type !== want.type) return 'dtype';
  if (got.dims.join(',') !== want.dims.join(',')) return 'shape';
  if (want.type === 'string') {
    return got.data.every((v, i) => v === want.data[i]) ? '' : 'values';
  }
  const exact = !['float16', 'float32', 'float64'].includes(want.type);
  const a = numbers(got), e = numbers(want);
  for (let i = 0; i < e.length; ++i) {
    if (Number.isNaN(a[i]) && Number.isNaN(e[i])) continue;
    const ok = exact ? a[i] === e[i] : a[i] === e[i] || Math.abs(a[i] - e[i]) <= ATOL + RTOL * Math.abs(e[i]);
    if (!ok) return 'values';
  }
  return '';
}

async function runCase(root, TensorProto, ModelProto, dir) {
  const bytes = fs.readFileSync(path.join(dir, 'model.onnx'));
  const model = ModelProto.decode(bytes);
  const inputs = model.graph.input.filter(
      (i) => !model.graph.initializer.some((t) => t.name === i.name));
  const values = [...inputs, ...model.graph.output];
  for (const v of values) {
    const tt = v.type && v.type.tensorType;
    if (!tt || !TYPES[tt.elemType]) return 'unsupported';
  }
  let session;
  try {
    session = await ort.InferenceSession.create(bytes, {intraOpNumThreads: 1});
  } catch (e) {
    return 'error';
  }
  const data = path.join(dir, 'test_data_set_0');
  const feeds = {};
  inputs.forEach((input, i) => {
    feeds[input.name] = toTensor(TensorProto, path.join(data, `input_${i}.pb`));
  });
  let results;
  try {
    results = await session.run(feeds);
  } catch (e) {
    return 'error';
  }
  for (let i = 0; i < model.graph.output.length; ++i) {
    const want = toTensor(TensorProto, path.join(data, `output_${i}.pb`));
    const got = results[model.graph.output[i].name];
    if (!got || compare(got, want) !== '') return 'mismatch';
  }
  return 'pass';
}

async function main() {
  const root = process.argv[2];
  const filter = process.argv[3] || '';
  const proto = await protobuf.load(ONNX_PROTO);
  const TensorProto = proto.lookupType('onnx.TensorProto');
  const ModelProto = proto.lookupType('onnx.ModelProto');
  const outcomes = {};
  for (const kind of ['node', 'pytorch-converted', 'pytorch-operator', 'simple']) {
    for (const name of fs.readdirSync(path.join(root, kind)).sort()) {
      const dir = path.join(root, kind, name);
      const key = `${kind}/${name}`;
      if (!key.includes(filter) || !fs.existsSync(path.join(dir, 'model.onnx'))) continue;
      try {
        outcomes[key] = await runCase(root, TensorProto, ModelProto, dir);
      } catch (e) {
        outcomes[key] = 'error';
      }
    }
  }
  process.stdout.write(JSON.stringify(outcomes, null, 1) + '\n');
}

main();
