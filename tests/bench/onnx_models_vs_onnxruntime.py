#!/usr/bin/python3
"""Models exported by PyTorch 1.13 (tests/golden/gen_onnx_models.py's MLP, LeNet, transformer
encoder layer and LSTM language model) at batch 1 and 64, float32, imported into Kiln
(kiln.onnx.load) and called
locally and on the server, against ONNX Runtime (onnxruntime-node 1.30, tests/bench/onnxruntime,
1 and 2 intra-op threads, its default optimization level) and PyTorch eager, in the same run:
each round times Kiln, then ONNX Runtime, then PyTorch, so that all see the same machine.

BENCH onnx_<model>_b<batch> kiln=<us> ref=<us> unit=us ref_name=onnxruntime speedup=<ref/kiln>
  (kiln: the local call; ref: ONNX Runtime's faster thread count), then the same for the
  server call (onnx_<model>_b<batch>_server) and PyTorch (ref_name=pytorch).

Before timing, each model goes the other way too: Kiln's function written as ONNX
(kiln.onnx.export) and run by ONNX Runtime gives PyTorch's output (a "# kiln -> onnx ->
onnxruntime" line with the largest difference).

Usage: onnx_models_vs_onnxruntime.py [rounds] [model]  (KILN_SERVER_BIN, KILN_PB_DIR as for the
Python tests; needs python3-torch and node)."""
import io
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "golden"))
from conftest import running_server  # noqa: E402
import gen_onnx_models  # noqa: E402
import kiln  # noqa: E402

ORT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "onnxruntime")
# name: (the module, one example's input shape, whether the input is token ids)
MODELS = {"mlp": (gen_onnx_models.Mlp, (20,), False),
          "lenet": (gen_onnx_models.LeNet, (1, 28, 28), False),
          "encoder": (gen_onnx_models.Encoder, (6, 32), False),
          "lstm_lm": (gen_onnx_models.LstmLanguageModel, (7,), True)}


def best_us(fn, calls, rounds=5):
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t0) / calls * 1e6)
    return best


def ort_us(path, x, threads, calls):
    out = subprocess.run(["node", "ort_time.js", path, str(threads), str(calls), "5"],
                         cwd=ORT_DIR, check=True, capture_output=True, text=True,
                         env=dict(os.environ, KILN_ORT_DIMS=json.dumps(list(x.shape)),
                                  KILN_ORT_DTYPE=str(x.dtype)))
    return json.loads(out.stdout)["us"]


def ort_run(path, x, tmp):
    """ONNX Runtime's output of the model at `path` on x."""
    inputs = os.path.join(tmp, "inputs.json")
    with open(inputs, "w") as f:
        json.dump({"dims": list(x.shape), "dtype": str(x.dtype), "data": x.ravel().tolist()}, f)
    out = subprocess.run(["node", "ort_run.js", path, inputs], cwd=ORT_DIR, check=True,
                         capture_output=True, text=True)
    y = json.loads(out.stdout)
    return np.array(y["data"], np.float32).reshape(y["dims"])


def bench(name, kiln_us, ref_us, ref_name):
    print("BENCH %s kiln=%.4g ref=%.4g unit=us ref_name=%s speedup=%.3g"
          % (name, kiln_us, ref_us, ref_name, ref_us / kiln_us), flush=True)


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    only = sys.argv[2] if len(sys.argv) > 2 else ""
    if not os.path.isdir(os.path.join(ORT_DIR, "node_modules", "onnxruntime-node")):
        subprocess.run(["npm", "install", "--no-audit", "--no-fund"], cwd=ORT_DIR, check=True,
                       env=dict(os.environ, ONNXRUNTIME_NODE_INSTALL="skip"))
    torch.set_num_threads(2)
    with running_server() as address, tempfile.TemporaryDirectory() as tmp:
        kiln.config.server = address
        for name, (cls, shape, tokens) in MODELS.items():
            if only not in name:
                continue
            torch.manual_seed(0)
            model = cls().eval()
            for batch in (1, 64):
                x = torch.randint(0, 50, (batch, *shape)) if tokens else torch.randn(batch, *shape)
                buf = io.BytesIO()
                torch.onnx.export(model, (x,), buf, opset_version=13, input_names=["x"])
                path = os.path.join(tmp, "%s_%d.onnx" % (name, batch))
                with open(path, "wb") as f:
                    f.write(buf.getvalue())
                m = kiln.onnx.load(path)
                local = kiln.function(m.inputs, m.outputs[0], mode=kiln.Mode(execute="local"))
                remote = kiln.function(m.inputs, m.outputs[0], mode=kiln.Mode(execute="server"))
                xn = x.numpy()
                with torch.no_grad():
                    want = model(x).numpy()
                np.testing.assert_allclose(local(xn), want, rtol=1e-3, atol=1e-4)
                back = os.path.join(tmp, "%s_%d_kiln.onnx" % (name, batch))
                kiln.onnx.export(local, back)
                via_ort = ort_run(back, xn, tmp)
                np.testing.assert_allclose(via_ort, want, rtol=1e-3, atol=1e-4)
                print("# kiln -> onnx -> onnxruntime: %s b%d, largest difference from PyTorch %.2g"
                      % (name, batch, np.abs(via_ort - want).max()), flush=True)
                calls = 2000 if batch == 1 and name == "mlp" else 200 if batch == 1 else 20
                for r in range(rounds):
                    k_local = best_us(lambda: local(xn), calls)
                    k_server = best_us(lambda: remote(xn), calls)
                    ort = min(ort_us(path, xn, t, calls) for t in (1, 2))
                    with torch.no_grad():
                        pt = best_us(lambda: model(x), calls)
                    tag = "onnx_%s_b%d" % (name, batch)
                    print("# round %d" % (r + 1), flush=True)
                    bench(tag, k_local, ort, "onnxruntime")
                    bench(tag + "_server", k_server, ort, "onnxruntime")
                    bench(tag, k_local, pt, "pytorch")


if __name__ == "__main__":
    main()
