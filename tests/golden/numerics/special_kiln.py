"""kiln's values of the special functions' cases of golden.json (corpus.SPECIAL), for
tests/python/test_numerics_corpus.py and accuracy_table.py; needs kiln.config.server set."""
import numpy as np

import corpus


def special_function(case):
    """kiln's compiled expression of a special case, in the vectors a, b, ... of its dtype."""
    import kiln
    import kiln.tensor as kt
    import kiln.tensor.xlogx as xlogx
    ns = {}
    for mod in (kt, kt.math, kt.special, xlogx):
        ns.update({k: v for k, v in vars(mod).items() if not k.startswith("_")})
    names = corpus.SPECIAL_ARGS[:len(case["points"][0])]
    ins = [kt.vector(n, dtype=case["dtype"]) for n in names]
    ns.update(zip(names, ins))
    return kiln.function(ins, eval(case["expr"], ns))


def special_values(case):
    """kiln's values at the case's points, raveled (a row a point for log_softmax)."""
    out = special_function(case)(*corpus.special_inputs(case["points"], case["dtype"]))
    return [float(v) for v in np.ravel(out)]
