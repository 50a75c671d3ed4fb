#!/usr/bin/python3
"""The executor's cost per node against PyTensor's C VM (issue 40), in the same run: chains of
elementwise nodes (alternately + 0.5 and * 0.999, compiled without rewrites so that none fuse)
on a float64 scalar and on 1,000 float64, called from Python on both sides (Kiln's function run
in this process, kiln.Mode(optimizer=None, execute="local"); PyTensor's
Mode(linker="cvm", optimizer=None)). The per-node cost is the slope between a chain of 1 op and
one of 101 ops: (time(101) - time(1)) / (their nodes' difference), so the call's fixed cost
(Python's, the VM's) drops out; the fixed cost is reported too. Prints

  BENCH per_node_<case> kiln=<ns> ref=<ns> unit=ns ref_name=pytensor speedup=<ref/kiln>
  BENCH call_fixed_<case> ...: a one-op chain's call

for case in scalar, vec1000. Each round times a batch of each of the four functions in turn;
a function's time is its best batch over the rounds. PyTensor is imported from
KILN_PYTENSOR_PATH as in models_vs_pytensor.py; without it the Kiln side is printed alone.

Usage: per_node_vs_pytensor.py [rounds] (KILN_SERVER_BIN, KILN_PB_DIR as for the Python tests).
Run on an idle machine."""
import os
import re
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
from conftest import running_server  # noqa: E402
import kiln  # noqa: E402
import kiln.tensor as kt  # noqa: E402

PYTENSOR_PATH = os.environ.get("KILN_PYTENSOR_PATH", "")
pytensor = None
if PYTENSOR_PATH:
    sys.path[:0] = [p for p in PYTENSOR_PATH.split(os.pathsep) if p]
    import pytensor
    import pytensor.tensor as pt
    from pytensor.compile.mode import Mode as PtMode

SHORT, LONG = 1, 101  # ops in the two chains


def chain(lib, x, ops):
    y = x
    for i in range(ops):
        y = y + 0.5 if i % 2 == 0 else y * 0.999
    return y


def kiln_nodes(f):
    """The apply nodes of a Kiln function's graph (as its debugprint numbers them)."""
    text = kiln.printing.debugprint(f, file="str")
    return len(set(re.findall(r"\[id (\w+)\](?: '[^']*')? \d+$", text, re.M)))


def batch_seconds(fn, arg, calls):
    t0 = time.perf_counter()
    for _ in range(calls):
        fn(arg)
    return (time.perf_counter() - t0) / calls


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    if pytensor is None:
        print("# PyTensor not found (KILN_PYTENSOR_PATH is unset): Kiln's side alone", flush=True)
    with running_server() as address:
        kiln.config.server = address
        for case, n in (("scalar", 0), ("vec1000", 1000)):
            arg = np.array(1.5) if n == 0 else np.full(n, 1.5)
            funcs = {}  # (side, ops) -> (function, nodes)
            for ops in (SHORT, LONG):
                x = kt.dscalar("x") if n == 0 else kt.dvector("x")
                f = kiln.function([x], chain(kiln, x, ops),
                                  mode=kiln.Mode(optimizer=None, execute="local"))
                funcs["kiln", ops] = (f, kiln_nodes(f))
                if pytensor is not None:
                    x = pt.dscalar("x") if n == 0 else pt.dvector("x")
                    g = pytensor.function([x], chain(pytensor, x, ops),
                                          mode=PtMode(linker="cvm", optimizer=None))
                    funcs["pytensor", ops] = (g, len(g.maker.fgraph.apply_nodes))
            for (side, ops), (f, _) in funcs.items():  # the same values on both sides
                np.testing.assert_allclose(f(arg), funcs["kiln", ops][0](arg), rtol=1e-14)
            calls = {k: max(1, int(0.02 / batch_seconds(f, arg, 50))) for k, (f, _) in
                     funcs.items()}
            best = {k: float("inf") for k in funcs}
            for _ in range(rounds):
                for k, (f, _) in funcs.items():
                    best[k] = min(best[k], batch_seconds(f, arg, calls[k]))

            def per_node(side):
                nodes = funcs[side, LONG][1] - funcs[side, SHORT][1]
                return (best[side, LONG] - best[side, SHORT]) / nodes * 1e9

            for name, of in (("per_node", per_node),
                             ("call_fixed", lambda side: best[side, SHORT] * 1e9)):
                k = of("kiln")
                if pytensor is None:
                    print("BENCH %s_%s kiln=%.0f unit=ns" % (name, case, k), flush=True)
                else:
                    r = of("pytensor")
                    print("BENCH %s_%s kiln=%.0f ref=%.0f unit=ns ref_name=pytensor "
                          "speedup=%.2f" % (name, case, k, r, r / k), flush=True)
            print("# %s nodes: kiln %d and %d, pytensor %s" % (
                case, funcs["kiln", SHORT][1], funcs["kiln", LONG][1],
                "%d and %d" % (funcs["pytensor", SHORT][1], funcs["pytensor", LONG][1])
                if pytensor is not None else "-"), flush=True)


if __name__ == "__main__":
    main()
