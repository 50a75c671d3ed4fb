// Runs ONNX Runtime (CPU) once on one model: node ort_run.js <model.onnx> <inputs.json>, where
// the JSON holds {"dims": [...], "dtype": "float32" | "int64", "data": [...]} for the model's
// first input; prints {"dims": [...], "data": [...]} of its first output.
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

async function main() {
  const [file, inputs] = process.argv.slice(2);
  const session = await ort.InferenceSession.create(fs.readFileSync(file));
  const x = JSON.parse(fs.readFileSync(inputs, 'utf8'));
  const data = x.dtype === 'int64' ? BigInt64Array.from(x.data, (v) => BigInt(v))
                                   : Float32Array.from(x.data);
  const result = await session.run({[session.inputNames[0]]: new ort.Tensor(x.dtype, data, x.dims)});
  const y = result[session.outputNames[0]];
  process.stdout.write(JSON.stringify({dims: y.dims, data: Array.from(y.data, Number)}) + '\n');
}

main();
