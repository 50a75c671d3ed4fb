// Times ONNX Runtime (CPU) on one model: node ort_time.js <model.onnx> <threads> <calls> <rounds>
// runs `calls` calls `rounds` times on a random float32 input of the model's (static) input shape
// and prints {"us": <the best round's mean microseconds a call>} (its default optimization level,
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
  const data = Float32Array.from({length: size}, () => Math.random() - 0.5);
  const feeds = {[name]: new ort.Tensor('float32', data, dims)};
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
