#!/usr/bin/python3
"""Realistic model graphs (tests/bench/model_graphs.py: radon, logreg, eight_schools, mixture;
each [logp, dlogp] of one parameter vector, as a sampler calls it) in Kiln against PyTensor's
compiled C (its CVM), in the same run. A BENCH line (DESIGN.md section 5) per model and case:

  model_<name>_call_local: one call of the function run in this process
    (kiln.Mode(execute="local")), us;
  model_<name>_call_lane: the same call on the server (execute="server"), over its same-host
    lane (the client's choice on this host);
  model_<name>_call_grpc: the same call over gRPC (the lane turned off for it);
  model_<name>_lane_overhead: the lane call against the local call, interleaved (ref_name=floor:
    the same call with no transport; overhead= what the lane adds to a call, us);
  model_<name>_compile_warm: kiln.function / pytensor.function of a freshly built copy of a graph
    compiled before (Kiln's server cache, PyTensor's compiledir cache), ms, each round;
  model_<name>_compile_cold: the first compile: Kiln's of a graph the (new) server never saw,
    PyTensor's in a fresh process with an empty compiledir (its C modules built), ms, once;
  model_<name>_nodes: the node count of the optimized graph (unit=nodes, speedup = PyTensor's
    count over Kiln's: below 1, Kiln's graph is larger).

Each round times a batch of Kiln's calls, then a batch of PyTensor's, five times, keeping each
side's best batch (the mean of a call in it), so that both see the same machine; the ratio is
speedup = ref / kiln (above 1, Kiln is faster). Before timing, Kiln's logp and gradient are
checked against PyTensor's (the golden file's when PyTensor is absent).

PyTensor is imported from KILN_PYTENSOR_PATH (a PYTHONPATH to prepend, e.g. the oracle's:
`. /tmp/pytensor-oracle/env.sh && KILN_PYTENSOR_PATH=$PYTHONPATH`; PYTENSOR_FLAGS is honoured).
Without it the bench says so and compares with the times tests/golden/pytensor_models.json
records (measured by gen_pytensor_models.py on its machine, not in this run): such lines carry
ref_from=golden, and the cold compile has no reference.

Usage: models_vs_pytensor.py [rounds] [model-substring]  (KILN_SERVER_BIN, KILN_PB_DIR as for the
Python tests). Run on an idle machine.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
from conftest import running_server  # noqa: E402
import kiln  # noqa: E402
import kiln.tensor as at  # noqa: E402
import model_graphs  # noqa: E402  (this file's directory is on sys.path)

PYTENSOR_PATH = os.environ.get("KILN_PYTENSOR_PATH", "")
if PYTENSOR_PATH:
    sys.path[:0] = [p for p in PYTENSOR_PATH.split(os.pathsep) if p]
    try:
        import pytensor
        import pytensor.tensor as pt
    except ImportError as e:
        sys.exit("KILN_PYTENSOR_PATH=%s: cannot import pytensor: %s" % (PYTENSOR_PATH, e))
else:
    pytensor = pt = None

with open(os.path.join(HERE, "..", "golden", "pytensor_models.json")) as _f:
    GOLDEN = json.load(_f)

# Run in a fresh process: prints PyTensor's first compile of a model, in seconds.
COLD_COMPILE = """
import sys, time
sys.path[:0] = %r
import pytensor, pytensor.tensor as pt, model_graphs
m = model_graphs.build(%r, pytensor, pt)
t0 = time.perf_counter()
pytensor.function(m.inputs, m.outputs)
print(time.perf_counter() - t0)
"""


def mean_seconds(fn, calls):
    """The mean time of `calls` calls of fn."""
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls


def calls_for(fn, seconds=0.1):
    """How many calls of fn take about `seconds`."""
    fn()
    return max(1, int(seconds / max(mean_seconds(fn, 3), 1e-7)))


def best_interleaved(measured, reference, repeats=5):
    """The best over `repeats` of each one's mean call time, a batch of one then a batch of the
    other, so that both see the same machine; reference None: measured alone."""
    m_calls = calls_for(measured)
    r_calls = calls_for(reference) if reference else 0
    best_m = best_r = float("inf")
    for _ in range(repeats):
        best_m = min(best_m, mean_seconds(measured, m_calls))
        if reference:
            best_r = min(best_r, mean_seconds(reference, r_calls))
    return best_m, best_r


def lane_of(f):
    """The same-host lane of the client f runs its calls through."""
    return f._runner.client._lane


def over_grpc(f, *args):
    """f(*args) with its client's same-host lane turned off for the call."""
    lane = lane_of(f)
    usable, lane.usable = lane.usable, False
    try:
        return f(*args)
    finally:
        lane.usable = usable


def kiln_nodes(f):
    """The node count of a Kiln function's optimized graph: the nodes its debugprint numbers
    (each apply node once, with its position in the toposort)."""
    text = kiln.printing.debugprint(f, file="str")
    return len(set(re.findall(r"\[id (\w+)\](?: '[^']*')? \d+$", text, re.M)))


def bench(case, kiln_value, ref_value, unit, from_golden=False):
    """Prints one BENCH line; times: speedup = ref / kiln."""
    tail = " ref_from=golden" if from_golden else ""
    if ref_value is None:
        print("BENCH %s kiln=%.4g unit=%s%s" % (case, kiln_value, unit, tail), flush=True)
        return
    print("BENCH %s kiln=%.4g ref=%.4g unit=%s ref_name=pytensor speedup=%.3g%s"
          % (case, kiln_value, ref_value, unit, ref_value / kiln_value, tail), flush=True)


def pytensor_cold_compile_seconds(name):
    """PyTensor's compile of model `name` in a new process with an empty compiledir."""
    with tempfile.TemporaryDirectory(prefix="pytensor-cold-") as compiledir:
        env = dict(os.environ)
        flags = [f for f in env.get("PYTENSOR_FLAGS", "").split(",")
                 if f and not f.startswith("compiledir")]
        env["PYTENSOR_FLAGS"] = ",".join(flags + ["compiledir=" + compiledir])
        path = [p for p in PYTENSOR_PATH.split(os.pathsep) if p] + [HERE]
        out = subprocess.run([sys.executable, "-c", COLD_COMPILE % (path, name)], env=env,
                             check=True, capture_output=True, text=True).stdout
        return float(out.split()[-1])


class Side:
    """One model compiled in Kiln (local and on the server) and in PyTensor (or the golden
    file's values standing for it)."""

    def __init__(self, name):
        self.name = name
        self.golden = GOLDEN["models"][name]
        model = model_graphs.build(name, kiln, at)
        self.point = model.point
        t0 = time.perf_counter()
        self.local = kiln.function(model.inputs, model.outputs, mode=kiln.Mode(execute="local"))
        self.kiln_cold = time.perf_counter() - t0
        self.server = kiln.function(model.inputs, model.outputs,
                                    mode=kiln.Mode(execute="server"))
        self.ref = None
        if pytensor is not None:
            model = model_graphs.build(name, pytensor, pt)
            self.ref = pytensor.function(model.inputs, model.outputs)
            assert type(self.ref.vm).__name__ == "CVM", "PyTensor runs %s, not its C VM" % (
                type(self.ref.vm).__name__)
        self.check()

    def check(self):
        """Kiln's logp and gradient (local, lane, gRPC) against PyTensor's."""
        if self.ref is not None:
            want_logp, want_dlogp = self.ref(*self.point)
        else:
            want_logp, want_dlogp = self.golden["logp"], np.array(self.golden["dlogp"])
        for got_logp, got_dlogp in (self.local(*self.point), self.server(*self.point),
                                    over_grpc(self.server, *self.point)):
            np.testing.assert_allclose(got_logp, want_logp, rtol=1e-10)
            np.testing.assert_allclose(got_dlogp, want_dlogp, rtol=1e-10,
                                       atol=1e-10 * np.abs(want_dlogp).max())

    def ref_call(self):
        return self.ref(*self.point)

    def warm_compiles(self):
        """(Kiln's, PyTensor's or None) compile of a freshly built copy of the graph, s."""
        model = model_graphs.build(self.name, kiln, at)
        t0 = time.perf_counter()
        kiln.function(model.inputs, model.outputs, mode=kiln.Mode(execute="local"))
        k = time.perf_counter() - t0
        if self.ref is None:
            return k, None
        model = model_graphs.build(self.name, pytensor, pt)
        t0 = time.perf_counter()
        pytensor.function(model.inputs, model.outputs)
        return k, time.perf_counter() - t0

    def report_once(self):
        """The cold compile and the node counts."""
        n = self.name
        if self.ref is not None:
            bench("model_%s_compile_cold" % n, self.kiln_cold * 1e3,
                  pytensor_cold_compile_seconds(n) * 1e3, "ms")
            bench("model_%s_nodes" % n, kiln_nodes(self.local),
                  len(self.ref.maker.fgraph.apply_nodes), "nodes")
        else:
            bench("model_%s_compile_cold" % n, self.kiln_cold * 1e3, None, "ms")
            bench("model_%s_nodes" % n, kiln_nodes(self.local), self.golden["nodes"], "nodes",
                  from_golden=True)

    def report_round(self):
        """The three calls and the warm compile, each interleaved with PyTensor's."""
        n, p = self.name, self.point
        if not lane_of(self.server).usable:
            print("# model_%s_call_lane: the client cannot use the server's lane here: gRPC"
                  % n, flush=True)
        for case, call in (("local", lambda: self.local(*p)), ("lane", lambda: self.server(*p)),
                           ("grpc", lambda: over_grpc(self.server, *p))):
            k, r = best_interleaved(call, self.ref_call if self.ref is not None else None)
            if self.ref is None:
                bench("model_%s_call_%s" % (n, case), k * 1e6, self.golden["call_us"], "us",
                      from_golden=True)
            else:
                bench("model_%s_call_%s" % (n, case), k * 1e6, r * 1e6, "us")
        # The lane's own cost: the server's call against the local one, interleaved.
        k, r = best_interleaved(lambda: self.server(*p), lambda: self.local(*p))
        print("BENCH model_%s_lane_overhead kiln=%.4g ref=%.4g unit=us ref_name=floor "
              "speedup=%.3g overhead=%.4g" % (n, k * 1e6, r * 1e6, r / k, (k - r) * 1e6),
              flush=True)
        best_k = best_r = float("inf")
        for _ in range(3):
            k, r = self.warm_compiles()
            best_k = min(best_k, k)
            best_r = min(best_r, r) if r is not None else None
        if best_r is None:
            bench("model_%s_compile_warm" % n, best_k * 1e3, self.golden["compile_warm_ms"],
                  "ms", from_golden=True)
        else:
            bench("model_%s_compile_warm" % n, best_k * 1e3, best_r * 1e3, "ms")


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    only = sys.argv[2] if len(sys.argv) > 2 else ""
    if pytensor is None:
        print("# PyTensor not found (KILN_PYTENSOR_PATH is unset): ref= are the times "
              "tests/golden/pytensor_models.json records for PyTensor %s on %s (ref_from=golden)"
              % (GOLDEN["pytensor_version"], GOLDEN["machine"]), flush=True)
    else:
        print("# PyTensor %s from %s, cxx=%s" % (pytensor.__version__,
                                                 os.path.dirname(pytensor.__file__),
                                                 pytensor.config.cxx), flush=True)
    names = [n for n in model_graphs.MODELS if only in n]
    with running_server() as address:
        kiln.config.server = address
        warm = at.dvector("x")  # the client's and server's first-call costs, out of the models'
        kiln.function([warm], warm + 1, mode=kiln.Mode(execute="local"))(np.zeros(2))
        sides = [Side(n) for n in names]
        for side in sides:
            side.report_once()
        for r in range(rounds):
            print("# round %d" % (r + 1), flush=True)
            for side in sides:
                side.report_round()


if __name__ == "__main__":
    main()
