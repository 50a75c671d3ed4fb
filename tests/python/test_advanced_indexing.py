"""NumPy's advanced indexing through AdvancedSubtensor and AdvancedIncSubtensor, as Aesara 2.9.4
builds it: x[...] with integer arrays (broadcast together, adjacent or apart), integers, slices,
None, ... and boolean masks, constant or symbolic; set_subtensor (the last write of a repeated
index wins), inc_subtensor (numpy.add.at, or x[idx] += y with ignore_duplicates), gradients by
finite differences, printed names and types as Aesara's, and the errors."""
import numpy as np
import pytest

import kiln
import kiln.tensor as kt
from kiln.gradient import verify_grad

SHAPE = (3, 4, 5)
X = np.arange(60.0).reshape(SHAPE) / 4.0 - 3.0
B = np.array([True, False, True])
B2 = np.array([[1, 0, 1, 1], [0, 0, 1, 0], [1, 1, 1, 1]], dtype=bool)

# The index expressions (the core test reads the same kinds from
# tests/golden/numpy_advanced_indexing.txt).
EXPRESSIONS = {
    "x[[0, 2, -1]]": ([0, 2, -1],),
    "x[[[0, 1], [2, -1]]]": ([[0, 1], [2, -1]],),
    "x[:, [1, 3]]": (slice(None), [1, 3]),
    "x[[0, 2], [1, 3]]": ([0, 2], [1, 3]),
    "x[[0, 2], :, [1, 4]]": ([0, 2], slice(None), [1, 4]),
    "x[1, :, [0, 4, 2]]": (1, slice(None), [0, 4, 2]),
    "x[:, [[0], [2]], [1, 3, 4]]": (slice(None), [[0], [2]], [1, 3, 4]),
    "x[[[0], [2]], 1:3, [1, 3, 4]]": ([[0], [2]], slice(1, 3), [1, 3, 4]),
    "x[None, [0, 2]]": (None, [0, 2]),
    "x[[1, 2], None, [0, 1]]": ([1, 2], None, [0, 1]),
    "x[[0, 1], :, 0, None]": ([0, 1], slice(None), 0, None),
    "x[..., [4, 0]]": (Ellipsis, [4, 0]),
    "x[[2, 0], ...]": ([2, 0], Ellipsis),
    "x[::-1, [3, -4]]": (slice(None, None, -1), [3, -4]),
    "x[B]": (B,),
    "x[B2]": (B2,),
    "x[B, 1:]": (B, slice(1, None)),
    "x[:, [False, True, True, False]]": (slice(None), np.array([False, True, True, False])),
    "x[[0, 0, 2], [1, 1, 3]]": ([0, 0, 2], [1, 1, 3]),
    "x[-1, [0], :]": (-1, [0], slice(None)),
    "x[[1], None, ::2, [-5, 4]]": ([1], None, slice(None, None, 2), [-5, 4]),
    "x[B, [[0], [2]]]": (B, [[0], [2]]),
}


def _check(x, view, np_index, seed):
    """view's values, set_subtensor, inc_subtensor (numpy.add.at) and the gradient of a read
    against NumPy's X[np_index]."""
    want = X[np_index]
    assert view.owner.op.__class__.__name__ == "AdvancedSubtensor"
    assert view.type.ndim == want.ndim
    got = kiln.function([x], view)(X)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)

    y = np.round(np.random.default_rng(seed).normal(size=want.shape), 3)
    expected = X.copy()
    expected[np_index] = y
    np.testing.assert_array_equal(kiln.function([x], kt.set_subtensor(view, y))(X), expected)
    expected = X.copy()
    np.add.at(expected, np_index, y)  # repeated indices accumulate
    np.testing.assert_allclose(kiln.function([x], kt.inc_subtensor(view, y))(X), expected)
    expected = X.copy()
    expected[np_index] += y  # a repeated index adds once
    np.testing.assert_allclose(
        kiln.function([x], kt.inc_subtensor(view, y, ignore_duplicates=True))(X), expected)

    # d/dx sum(y * x[index]) scatters y back to the indexed places, accumulating repeats.
    expected = np.zeros(SHAPE)
    np.add.at(expected, np_index, y)
    grad = kiln.grad(kt.sum(view * y), x)
    np.testing.assert_allclose(kiln.function([x], grad)(X), expected)


@pytest.mark.parametrize("name", list(EXPRESSIONS))
def test_expressions_match_numpy(server, name):
    x = kt.dtensor3("x")
    _check(x, x[EXPRESSIONS[name]], EXPRESSIONS[name], seed=len(name))


@pytest.mark.parametrize("name", ["x[[0, 2, -1]]", "x[[0, 2], :, [1, 4]]", "x[None, [0, 2]]",
                                  "x[B, 1:]", "x[[0, 0, 2], [1, 1, 3]]"])
def test_gradients_by_finite_differences(server, name):
    index = EXPRESSIONS[name]
    verify_grad(lambda a: a[index], [X])
    want = X[index].shape
    y = np.random.default_rng(0).normal(size=want[-1:])  # broadcast along the other dims
    verify_grad(lambda a, b: kt.inc_subtensor(a[index], b), [X, y])
    # A set at a repeated index keeps one value, which the gradient (Aesara's) does not model.
    if name not in ("x[[0, 2, -1]]", "x[[0, 0, 2], [1, 1, 3]]"):
        verify_grad(lambda a, b: kt.set_subtensor(a[index], b), [X, y])


def test_symbolic_indices_and_masks(server):
    x, i, j, s = kt.dtensor3("x"), kt.lvector("i"), kt.lmatrix("j"), kt.lscalar("s")
    m = kt.tensor("bool", (None,), name="m")
    f = kiln.function([x, i, j, s, m], [x[i, :, j], x[s, i], x[m, 1:], x[x[:, 0, 0] > -2.0]])
    iv, jv = np.array([2, -3]), np.array([[0], [4]])
    mv = np.array([False, True, True])
    got = f(X, iv, jv, 1, mv)
    for g, w in zip(got, [X[iv, :, jv], X[1, iv], X[mv, 1:], X[X[:, 0, 0] > -2.0]]):
        np.testing.assert_array_equal(g, w)
    t = kiln.function([x, i, s], x[i, s:, ::s])(X, [2, 0], 2)
    np.testing.assert_array_equal(t, X[[2, 0], 2:, ::2])
    w = kiln.function([x, i, j], kt.inc_subtensor(x[i, 0, j], 1.0))(X, [0, 0], [[1], [1]])
    expected = X.copy()
    np.add.at(expected, ([0, 0], 0, [[1], [1]]), 1.0)
    np.testing.assert_array_equal(w, expected)


def test_names_and_types_as_aesara():
    x, i = kt.dmatrix("x"), kt.lvector("i")
    assert str(x[i].owner.op) == "AdvancedSubtensor"
    assert kiln.pp(x[i]) == "AdvancedSubtensor(x, i)"
    assert x[i].type == kt.tensor("float64", (None, None)).type
    assert x[i, None].type.shape == (None, 1, None)
    assert kt.tensor("float64", (2, 3, 4))[i, None, i].type.shape == (None, 1, None)
    assert x[kt.tensor("int64", (1,)), kt.tensor("int64", (1,))].type.shape == (1,)
    assert x[np.array([True, False])].type.shape == (None, None)
    s = kt.set_subtensor(x[i, 0], 1.0)
    assert str(s.owner.op) == "AdvancedIncSubtensor{inplace=False,  set_instead_of_inc=True}"
    assert str(kt.inc_subtensor(x[i], 1.0).owner.op) == (
        "AdvancedIncSubtensor{inplace=False,  set_instead_of_inc=False}")
    assert kt.inc_subtensor(x[i], 1.0, ignore_duplicates=True).owner.op.ignore_duplicates
    assert kt.set_subtensor(kt.tensor("float64", (1, 4))[:, i], 1.0).type.shape == (1, None)
    text = kiln.dprint(kt.set_subtensor(x[i], 0.0), file="str")
    assert text.splitlines()[0].startswith(
        "AdvancedIncSubtensor{inplace=False,  set_instead_of_inc=True}")


def test_errors(server):
    x, i = kt.dtensor3("x"), kt.lvector("i")
    with pytest.raises(TypeError, match="index must be integers or a boolean mask"):
        x[kt.dvector("d")]
    with pytest.raises(TypeError, match="index must be integers or a boolean mask"):
        x[np.array([0.5, 1.0])]
    with pytest.raises(TypeError, match="does not support Python bools"):
        x[[True, False, True]]
    with pytest.raises(IndexError, match="boolean index did not match indexed array along "
                                         "dimension 0; dimension is 3"):
        kt.tensor("float64", (3, None))[np.array([True, False])]
    with pytest.raises(IndexError, match="too many indices"):
        x[[0], 0, 0, 0]
    with pytest.raises(TypeError, match="Trying to increment a 1-dimensional subtensor with a "
                                        "2-dimensional value"):
        kt.inc_subtensor(x[i, 0, 0], kt.dmatrix("y"))
    f = kiln.function([x, i], x[i, :, [0, 4]])
    with pytest.raises(kiln.KilnError, match="index 3 is out of bounds for axis 0 with size 3"):
        f(X, [3, 0])
    with pytest.raises(kiln.KilnError, match="index -6 is out of bounds for axis 2 with size 5"):
        kiln.function([x, i], x[0, 0, i])(X, [-6])
    with pytest.raises(kiln.KilnError, match="shape mismatch: indexing arrays could not be "
                                             r"broadcast together with shapes \(3,\) \(2,\)"):
        f(X, [0, 1, 2])
    m = kt.tensor("bool", (None,), name="m")
    with pytest.raises(kiln.KilnError, match="boolean index did not match indexed array along "
                                             "dimension 0; dimension is 3 but corresponding "
                                             "boolean dimension is 2"):
        kiln.function([x, m], x[m])(X, [True, False])


def test_take_like_indices_compile_to_advanced_subtensor1(server):
    """Aesara's specialize rewrites: one integer array among full slices is
    AdvancedSubtensor1 (local_replace_AdvancedSubtensor) and its increment
    AdvancedIncSubtensor1 (local_AdvancedIncSubtensor_to_AdvancedIncSubtensor1)."""
    x, i = kt.dtensor3("x"), kt.lvector("i")
    f = kiln.function([x, i], [x[:, i], kt.inc_subtensor(x[:, :, i], 1.0)])
    text = kiln.dprint(f, file="str")
    assert "AdvancedSubtensor1" in text and "AdvancedIncSubtensor1{no_inplace,inc}" in text
    assert "AdvancedSubtensor " not in text and "AdvancedIncSubtensor{" not in text
    a, b = f(X, [3, 0, 3])
    np.testing.assert_array_equal(a, X[:, [3, 0, 3]])
    expected = X.copy()
    np.add.at(expected, (slice(None), slice(None), [3, 0, 3]), 1.0)
    np.testing.assert_array_equal(b, expected)
    # ignore_duplicates keeps AdvancedIncSubtensor (AdvancedIncSubtensor1 always accumulates).
    g = kiln.function([x, i], kt.inc_subtensor(x[i], 1.0, ignore_duplicates=True))
    assert "AdvancedIncSubtensor{" in kiln.dprint(g, file="str")


def test_a_huge_broadcast_of_index_arrays_is_refused(server):
    """Arrays of shapes (10^6, 1) and (10^6,) index 10^12 places: with x's middle dim of 10^5
    the result would need 8 * 10^17 bytes, refused by its size before anything is allocated."""
    x, i, j = kt.dtensor3("x"), kt.lvector("i"), kt.lmatrix("j")
    f = kiln.function([x, i, j], x[j, :, i])
    n = 1000000
    with pytest.raises(kiln.KilnError, match="AdvancedSubtensor: "):
        f(np.zeros((1, 100000, 1)), np.zeros(n, dtype=np.int64), np.zeros((n, 1), dtype=np.int64))


@pytest.mark.parametrize("name", ["x[[0, 2, -1]]", "x[[0, 2], :, [1, 4]]", "x[None, [0, 2]]",
                                  "x[B, 1:]", "x[[0, 0, 2], [1, 1, 3]]"])
def test_jacobians_batch_the_gradient(server, name):
    """kiln.gradient.jacobian batches the backward pass (vectorize): AdvancedIncSubtensor and
    AdvancedSubtensor with a batch dim; row k of J is the indicator of where element k was read,
    and the Jacobian of an increment by y is that of x[idx] for y."""
    index = EXPRESSIONS[name]
    x = kt.dtensor3("x")
    y = kt.tensor("float64", (None,) * X[index].ndim, name="y")
    flat = kt.flatten(x[index] * 2.0)
    n = X[index].size
    want = np.zeros((n,) + SHAPE)
    for k in range(n):
        np.add.at(want[k], index, (np.arange(n) == k).reshape(X[index].shape) * 2.0)
    np.testing.assert_array_equal(kiln.function([x], kiln.gradient.jacobian(flat, x))(X), want)
    inc = kt.flatten(kt.inc_subtensor(x[index], y))
    jy = kiln.function([x, y], kiln.gradient.jacobian(inc, y))(X, np.ones(X[index].shape))
    expected = np.zeros((X.size,) + X[index].shape)
    for k in range(X[index].size):
        place = np.zeros(SHAPE)
        np.add.at(place, index, (np.arange(n) == k).reshape(X[index].shape))
        expected.reshape(X.size, -1)[:, k] = place.reshape(-1)
    np.testing.assert_array_equal(jy, expected)
