"""A 100,000-deep graph from Python: built, printed (linear text: subtrees nested over 100 levels
continue as blocks of their own), sent, compiled and run with no recursion anywhere."""
import math
import sys

import numpy as np

import kiln
import kiln.tensor as kt


def test_chain_of_100k_nodes(server):
    assert sys.getrecursionlimit() <= 100000  # a recursive walk would fail here
    x = kt.dvector("x")
    y = x
    for _ in range(99999):
        y = kt.tanh(y)
    text = kiln.dprint(y, file="str")
    assert text.count("\n") == 100000 + 999  # every node once, plus a line per cut
    assert max(len(line) for line in text.splitlines()) < 300
    f = kiln.function([x], y)
    out = f(np.array([0.5, -2.0]))
    expected = []
    for v in (0.5, -2.0):
        for _ in range(99999):
            v = math.tanh(v)
        expected.append(v)
    np.testing.assert_allclose(out, expected, rtol=1e-12)


def test_dprint_cuts_only_deep_subtrees():
    x = kt.dvector("x")
    out = kt.exp(kt.tanh(kt.sin(x)))
    assert kiln.dprint(out, file="str", max_nesting=1) == (
        "Elemwise{exp,no_inplace} [id A]\n"
        " |Elemwise{tanh,no_inplace} [id B] ...\n"
        "Elemwise{tanh,no_inplace} [id B]\n"
        " |Elemwise{sin,no_inplace} [id C] ...\n"
        "Elemwise{sin,no_inplace} [id C]\n"
        " |x [id D]\n")
    assert kiln.dprint(out, file="str", max_nesting=3) == kiln.dprint(out, file="str",
                                                                      max_nesting=-1)
