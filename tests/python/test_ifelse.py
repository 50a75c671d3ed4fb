"""kiln.ifelse against NumPy: the chosen values, laziness (a branch that would fail never runs,
and Print shows only the chosen branch), several values, gradients by finite differences."""
import numpy as np
import pytest

import kiln
import kiln.tensor as kt
from kiln import printing
from kiln.ifelse import ifelse


def test_the_tutorials_example(server):
    a, b = kt.scalars("a", "b")
    x, y = kt.matrices("x", "y")
    z_switch = kt.switch(kt.lt(a, b), kt.mean(x), kt.mean(y))
    z_lazy = ifelse(kt.lt(a, b), kt.mean(x), kt.mean(y))
    f_switch = kiln.function([a, b, x, y], z_switch)
    f_lazy = kiln.function([a, b, x, y], z_lazy)
    xv, yv = np.ones((4, 3)), 2 * np.ones((4, 3))
    for av, bv, want in [(1, 2, 1.0), (2, 1, 2.0)]:
        assert f_lazy(av, bv, xv, yv) == f_switch(av, bv, xv, yv) == want
    assert "if{}" in kiln.dprint(z_lazy, file="str")


def test_only_the_chosen_branch_runs(server, capsys):
    c = kt.dscalar("c")
    x = kt.dvector("x")
    then = printing.Print("then")(kt.exp(x))
    other = printing.Print("else")(x.reshape((7,)))  # fails for any other length
    f = kiln.function([c, x], ifelse(c, then, other))
    np.testing.assert_allclose(f(1.0, [0.0, 1.0]), np.exp([0.0, 1.0]))
    assert capsys.readouterr().out == "then __str__ = [1.         2.71828183]\n"
    with pytest.raises(kiln.KilnError, match="Reshape"):
        f(0.0, [0.0, 1.0])


def test_several_values_and_mixed_dtypes(server):
    c = kt.iscalar("c")
    x = kt.dvector("x")
    i = kt.ivector("i")
    out = ifelse(c, [x * 2, kt.sum(x)], [x.astype("float32") + 1, i.sum()])
    assert [o.dtype for o in out] == ["float64", "float64"]
    f = kiln.function([c, x, i], out)
    xv, iv = np.array([1.0, 2.0]), np.array([3, 4], dtype="int32")
    np.testing.assert_allclose(f(1, xv, iv)[0], xv * 2)
    np.testing.assert_allclose(f(0, xv, iv)[0], xv + 1)
    assert f(0, xv, iv)[1] == 7
    with pytest.raises(ValueError, match="must match"):
        ifelse(c, [x, x], [x])
    with pytest.raises(TypeError, match="both branches need one dtype and rank"):
        ifelse(c, x, kt.dmatrix())
    with pytest.raises(TypeError, match="compatible types"):
        ifelse(c, x, kt.fmatrix())


def test_gradient_through_either_branch(server):
    c = kt.dscalar("c")
    x = kt.dvector("x")
    y = kt.sum(ifelse(c, kt.sin(x) * x, kt.exp(x)))
    f = kiln.function([c, x], kiln.grad(y, x))
    xv = np.array([0.3, -0.7])
    np.testing.assert_allclose(f(1.0, xv), np.cos(xv) * xv + np.sin(xv))
    np.testing.assert_allclose(f(0.0, xv), np.exp(xv))
