// Times ONNX Runtime (CPU) on one model: node ort_time.js <model.onnx> <threads> <calls> <rounds>
// runs `calls` calls `rounds` times on a random input of the model's (static) input shape
// (KILN_ORT_DIMS; float32, or with KILN_ORT_DTYPE=int64 integers below 50: token ids) and prints {"us": <the best round's mean microseconds a call>} (its default optimization level,
// `threads` intra-op threads).
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

async function main() {
  const [file, threads, calls, rounds] = process.argv.slice(2);
  const session = await ort.InferenceSession.create(fs.readFileSync(file),
                                                    {intraOpNumThreads: Number(threads)});
  const name = session.inputNames[0];
  const dims = JSON.parse(process.env.KILN_ORT_DIMS);
  const size = dims.reduce((a, b) => a * b, 1);
  const dtype = process.env.KILN_ORT_DTYPE || 'float32';
  const data = dtype === 'int64'
                   ? BigInt64Array.from({length: size}, () => BigInt(Math.floor(Math.random() * 50)))
                   : Float32Array.from({length: size}, () => Math.random() - 0.5);
  const feeds = {[name]: new ort.Tensor(dtype, data, dims)};
  for (let i = 0; i < 10; ++i) await session.run(feeds);
  let best = Infinity;
  for (let r = 0; r < Number(rounds); ++r) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < Number(calls); ++i) await session.run(feeds);
    best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e3 / Number(calls));
  }
  process.stdout.write(JSON.stringify({us: best}) + '\n');
}

main();
