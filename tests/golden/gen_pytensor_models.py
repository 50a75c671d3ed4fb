"""Writes tests/golden/pytensor_models.json: for each model of tests/bench/model_graphs.py (radon,
logreg, eight_schools, mixture) PyTensor's logp and gradient at the model's fixed point (and the
point itself), the node count of its optimized graph, and, for information only, its compile and
call times on the machine that ran this (PyTensor's C backend, the CVM).

Run under the PyTensor 2.34.0 oracle (not needed by the tests), from the repository's root:
    (. /tmp/pytensor-oracle/env.sh && /usr/bin/python3 tests/golden/gen_pytensor_models.py [model...])
where env.sh puts PyTensor's source tree (git archive rel-2.34.0 of pymc-devs/pytensor, with
numpy.exceptions imports falling back to NumPy 1.24's names) and its pure-Python dependencies
(etuples, cons, logical-unification, miniKanren, filelock) on PYTHONPATH and sets
PYTENSOR_FLAGS=compiledir=... ; g++ and python3-dev must be installed (config.cxx non-empty).
"""
import json
import os
import platform
import sys
import time

import numpy as np
import pytensor
import pytensor.tensor as pt

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "bench"))
import model_graphs  # noqa: E402

assert pytensor.__version__.startswith("2.34"), pytensor.__version__
assert pytensor.config.cxx, "PyTensor found no C++ compiler: its times would be Python's"


def best_call_seconds(f, args, repeats=5):
    """The best over `repeats` batches (of about 0.2 s each) of the mean time of one call."""
    t0 = time.perf_counter()
    f(*args)
    calls = max(1, int(0.2 / max(time.perf_counter() - t0, 1e-7)))
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            f(*args)
        best = min(best, (time.perf_counter() - t0) / calls)
    return best


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


# With model names as arguments, only those are (re)computed; the file's other models stay.
GOLDEN = os.path.join(HERE, "pytensor_models.json")
names = sys.argv[1:] or model_graphs.MODELS
golden = {"models": {}}
if sys.argv[1:] and os.path.exists(GOLDEN):
    with open(GOLDEN) as f:
        golden = json.load(f)
golden.update({"pytensor_version": pytensor.__version__,
               "machine": "%s, %d cores, Python %s, NumPy %s" % (
                   cpu_name(), os.cpu_count(), platform.python_version(), np.__version__)})
for name in names:
    model = model_graphs.build(name, pytensor, pt)
    pytensor.function(model.inputs, model.outputs)  # fills the compile cache
    model = model_graphs.build(name, pytensor, pt)
    t0 = time.perf_counter()
    f = pytensor.function(model.inputs, model.outputs)
    compile_s = time.perf_counter() - t0
    assert type(f.vm).__name__ == "CVM", type(f.vm)
    logp, dlogp = f(*model.point)
    golden["models"][name] = {
        "point": model.point[0].tolist(),
        "logp": float(logp),
        "dlogp": dlogp.tolist(),
        "nodes": len(f.maker.fgraph.apply_nodes),
        "compile_warm_ms": round(compile_s * 1e3, 1),
        "call_us": round(best_call_seconds(f, model.point) * 1e6, 2),
    }
    print(name, {k: v for k, v in golden["models"][name].items()
                 if k not in ("point", "dlogp")}, flush=True)
with open(GOLDEN, "w") as f:
    json.dump(golden, f, indent=1)
    f.write("\n")
