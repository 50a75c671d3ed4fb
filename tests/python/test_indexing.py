"""NumPy-style indexing against NumPy on generated cases: integers, slices (negative steps,
clipped bounds), None, ..., and advanced indices (an integer array of 1 or 2 dims, repeated
entries, negative entries, or a constant boolean mask; or two or three integer arrays
broadcast together, adjacent or apart), in reads, in set_subtensor and
inc_subtensor (repeated indices accumulate), and in gradients."""
import numpy as np
import pytest

import kiln
import kiln.tensor as kt

SHAPE = (4, 3, 5)
X = np.arange(60.0).reshape(SHAPE) / 7.0


def _random_index(rng):
    """A random NumPy index into an array of SHAPE with at most one advanced entry."""
    n = int(rng.integers(1, len(SHAPE) + 1))
    ellipsis = n < len(SHAPE) and rng.random() < 0.3  # then the entries index the last n axes
    axes = list(range(len(SHAPE) - n, len(SHAPE))) if ellipsis else list(range(n))
    advanced_axis = axes[int(rng.integers(0, n))] if rng.random() < 0.6 else None
    entries = []
    for axis in axes:
        size = SHAPE[axis]
        if axis == advanced_axis:
            kind = rng.integers(0, 3)
            if kind == 0:
                entries.append(rng.integers(-size, size, size=int(rng.integers(1, 6))).tolist())
            elif kind == 1:
                entries.append(rng.integers(-size, size, size=(2, int(rng.integers(1, 3)))))
            else:
                entries.append(rng.random(size) < 0.5)
        elif rng.random() < 0.35:
            entries.append(int(rng.integers(-size, size)))
        else:
            parts = [None if rng.random() < 0.4 else int(rng.integers(-size - 2, size + 2))
                     for _ in range(2)]
            step = [None, 1, 2, -1, -2][int(rng.integers(0, 5))]
            entries.append(slice(parts[0], parts[1], step))
    if rng.random() < 0.3 and advanced_axis is None:
        entries.insert(int(rng.integers(0, len(entries) + 1)), None)
    return (Ellipsis,) + tuple(entries) if ellipsis else tuple(entries)


def _random_multi_index(rng):
    """A random NumPy index into an array of SHAPE with two or three integer arrays whose
    shapes broadcast together, adjacent or apart, beside integers and slices."""
    n_adv = int(rng.integers(2, 4))
    adv_axes = sorted(rng.choice(len(SHAPE), size=n_adv, replace=False).tolist())
    shapes = [(3,), (1,), (2, 1), (2, 3)]
    entries = []
    for axis, size in enumerate(SHAPE):
        if axis in adv_axes:
            shape = shapes[int(rng.integers(0, 4))] if rng.random() < 0.8 else (3,)
            entries.append(rng.integers(-size, size, size=shape))
        elif rng.random() < 0.3:
            entries.append(int(rng.integers(-size, size)))
        else:
            entries.append(slice(None, None, [None, -1, 2][int(rng.integers(0, 3))]))
    return tuple(entries)


CASES = [_random_index(np.random.default_rng(seed)) for seed in range(80)]
CASES += [_random_multi_index(np.random.default_rng(1000 + seed)) for seed in range(40)]


def _check_against_numpy(x, view, np_index, seed):
    """x[...] as view reads, set_subtensor, inc_subtensor and the gradient, against NumPy with
    X[np_index]."""
    want = X[np_index]
    assert view.type.ndim == want.ndim
    got = kiln.function([x], view)(X)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)

    y = np.random.default_rng(seed).normal(size=want.shape)
    expected = X.copy()
    expected[np_index] = y
    np.testing.assert_array_equal(kiln.function([x], kt.set_subtensor(view, y))(X), expected)

    expected = X.copy()
    np.add.at(expected, np_index, y)  # repeated indices accumulate
    np.testing.assert_allclose(kiln.function([x], kt.inc_subtensor(view, y))(X), expected)

    # d/dx sum(y * x[index]) scatters y back to the indexed places, accumulating repeats.
    expected = np.zeros(SHAPE)
    np.add.at(expected, np_index, y)
    grad = kiln.grad(kt.sum(view * y), x)
    np.testing.assert_allclose(kiln.function([x], grad)(X), expected)


@pytest.mark.parametrize("index", CASES, ids=[repr(c) for c in CASES])
def test_reads_writes_and_gradients_match_numpy(server, index):
    x = kt.dtensor3("x")
    _check_against_numpy(x, x[index], index, seed=1)


# None beside advanced indices (adjacent, so that NumPy keeps their dims in place).
NEW_AXES = [(None, [0, 2]), ([1, 3], None, 1), (slice(None), [0, 2], None),
            ([[0], [3]], [1, 2], None), (Ellipsis, None, [4, 0])]


@pytest.mark.parametrize("index", NEW_AXES, ids=[repr(c) for c in NEW_AXES])
def test_new_axes_beside_arrays(server, index):
    x = kt.dtensor3("x")
    _check_against_numpy(x, x[index], index, seed=3)


def test_new_axes_with_arrays_apart(server):
    """The arrays' dims first (NumPy's rule when a slice or None separates them), then the
    slices' and new axes' dims in order (AdvancedSubtensor)."""
    x = kt.dtensor3("x")
    for index in [([0, 1], slice(None), 0, None), ([1, 2], None, [0, 1]), (0, None, [1, 2])]:
        _check_against_numpy(x, x[index], index, seed=4)


def test_several_arrays_out_of_range_fail(server):
    x = kt.dtensor3("x")
    i = kt.lvector("i")
    f = kiln.function([x, i], x[i, [0, 2]])
    np.testing.assert_array_equal(f(X, [1, -1]), X[[1, -1], [0, 2]])
    for bad in ([4, 0], [0, -5]):  # past an axis, though inside the merged axes
        with pytest.raises(kiln.KilnError, match="out of bounds"):
            f(X, bad)
    with pytest.raises(kiln.KilnError, match="out of bounds"):
        kiln.function([x, i], x[0, [0, 1], i])(X, [0, 5])


def _masks(t):
    """Three masks computed from t: over axis 0, over axes 0 and 1, over axis 2."""
    return t[:, 0, 0] > 1.0, t[:, :, 0] < 3.0, t[0, 0, :] > 0.2


MASKED = {
    "x[m]": lambda m, m2, m3: (m,),
    "x[:, 1:, m3]": lambda m, m2, m3: (slice(None), slice(1, None), m3),
    "x[m2]": lambda m, m2, m3: (m2,),
    "x[m2, ::-1]": lambda m, m2, m3: (m2, slice(None, None, -1)),
    "x[1, m3[::2]]": lambda m, m2, m3: (1, m3[::2]),
    "x[m, [[0], [2]]]": lambda m, m2, m3: (m, [[0], [2]]),
}


@pytest.mark.parametrize("name", list(MASKED))
def test_symbolic_boolean_masks(server, name):
    """Masks computed in the graph (over one dim or several), in reads, writes and gradients."""
    x = kt.dtensor3("x")
    _check_against_numpy(x, x[MASKED[name](*_masks(x))], MASKED[name](*_masks(X)), seed=2)


def test_a_mask_of_the_wrong_length_fails(server):
    x, m = kt.dmatrix("x"), kt.tensor("bool", (None,), name="m")
    f = kiln.function([x, m], x[m])
    np.testing.assert_array_equal(f(X[0], [True, False, True]), X[0][[0, 2]])
    with pytest.raises(kiln.KilnError, match="boolean index did not match indexed array"):
        f(X[0], [True, False])
    np.testing.assert_array_equal(kiln.function([m], kt.nonzero(m)[0])([False, True, True]),
                                  [1, 2])


def test_writes_through_new_axes_over_the_whole_tensor(server):
    x, y = kt.dmatrix("x"), kt.dvector("y")
    m, v = X[0], np.arange(5.0)
    np.testing.assert_array_equal(kiln.function([x, y], kt.set_subtensor(x[:, None], y))(m, v),
                                  np.broadcast_to(v, m.shape))
    np.testing.assert_array_equal(kiln.function([x, y], kt.inc_subtensor(x[None], y))(m, v),
                                  m + v)


def test_symbolic_integer_indices_and_their_errors(server):
    x, i = kt.dmatrix("x"), kt.lvector("i")
    f = kiln.function([x, i], x[:, i])
    np.testing.assert_array_equal(f(X[0], [4, -1, 0]), X[0][:, [4, -1, 0]])
    with pytest.raises(kiln.KilnError, match="out of bounds"):
        f(X[0], [5])
    with pytest.raises(IndexError, match="boolean index did not match"):
        kt.tensor("float64", (3, None))[np.array([True, False])]
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0]
    with pytest.raises(IndexError, match="single ellipsis"):
        x[..., ...]
