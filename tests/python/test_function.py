"""kiln.function's options: In (names, defaults), Out, givens, updates, input checking,
shared variables, modes; and the server's errors as exceptions with its message."""
import numpy as np
import pytest

import kiln
import kiln.tensor as kt
from kiln.compile.io import In
from kiln.graph.utils import MissingInputError


def test_in_names_defaults_and_keywords(server):
    x, y = kt.dscalars("x", "y")
    f = kiln.function([x, kiln.In(y, value=1.0, name="why")], x + y)
    assert float(f(2.0)) == 3.0
    assert float(f(2.0, why=5.0)) == 7.0
    assert float(f(x=3.0)) == 4.0
    with pytest.raises(TypeError, match="Missing required input: x"):
        f()


def test_out_and_multiple_outputs(server):
    x = kt.dvector("x")
    f = kiln.function([x], [kiln.Out(x * 2, borrow=True), x.sum()])
    doubled, total = f([1.0, 2.0])
    np.testing.assert_array_equal(doubled, [2.0, 4.0])
    assert float(total) == 3.0


def test_givens_substitute_before_compiling(server):
    x, y = kt.dvectors("x", "y")
    f = kiln.function([y], (x * 3).sum(), givens={x: y + 1})
    assert float(f([0.0, 1.0])) == 9.0


def test_shared_updates_apply_after_outputs(server):
    state = kiln.shared(np.float64(0.0), name="state")
    inc = kt.dscalar("inc")
    acc = kiln.function([inc], state, updates=[(state, state + inc)])
    assert float(acc(1.0)) == 0.0  # the old value: updates come after the outputs
    assert float(acc(10.0)) == 1.0
    assert float(state.get_value()) == 11.0
    state.set_value(-1.0)
    assert float(acc(0.0)) == -1.0


def test_input_downcast_follows_aesara(server):
    x = kt.fvector("x")
    f = kiln.function([x], x * 2)
    with pytest.raises(TypeError) as e:
        f(np.array([1.5, 2.5]))
    assert str(e.value) == (
        'x: TensorType(float32, (?,)) cannot store a value of dtype float64 without risking loss '
        'of precision. If you do not mind this loss, you can: 1) explicitly cast your data to '
        'float32, or 2) set "allow_input_downcast=True" when calling "function". Value: '
        '"array([1.5, 2.5])"')
    # A list converts when no value changes, as in Aesara (2 and 1.5 are exact in float32).
    np.testing.assert_array_equal(f([1.5, 2]), np.array([3, 4], dtype="float32"))
    with pytest.raises(TypeError, match=r"TensorType\(float32, \(\?,\)\) cannot store accurately "
                       r"value \[0.1\], it would be represented as \[0.1\]"):
        f([0.1])
    g = kiln.function([x], x * 2, allow_input_downcast=True)
    np.testing.assert_array_equal(g(np.array([1.5, 2.5])), np.array([3, 5], dtype="float32"))
    i = kt.ivector("i")
    h = kiln.function([i], i + 1)
    with pytest.raises(TypeError, match=r"i: Wrong number of dimensions: expected 1, got 2 with "
                       r"shape \(2, 2\)\."):
        h(np.zeros((2, 2), dtype="int32"))


def test_modes(server):
    x = kt.dvector("x")
    fast = kiln.function([x], kt.exp(kt.log(x)), mode="FAST_RUN")
    none = kiln.function([x], kt.exp(kt.log(x)), mode="NONE")
    assert fast.function_id != none.function_id
    np.testing.assert_allclose(fast([2.0]), none([2.0]))
    with pytest.raises(ValueError, match="mode 'DebugModeX'"):
        kiln.function([x], x, mode="DebugModeX")


def test_building_errors_name_the_op_and_types():
    p = kt.tensor("float64", (2, 4), name="p")
    q = kt.tensor("float64", (None, 3), name="q")
    with pytest.raises(ValueError) as e:
        p + q
    assert str(e.value) == (
        "Elemwise{add,no_inplace}: input 1 has type TensorType(float64, (?, 3)) but input 0 "
        "has TensorType(float64, (2, 4)): shapes (2, 4) and (?, 3) do not broadcast")
    with pytest.raises(TypeError, match="neg is not defined for bool"):
        -kt.tensor("bool", (None,))


def test_server_errors_are_exceptions_with_its_message(server):
    x = kt.dvector("x")
    with pytest.raises(MissingInputError, match=r"^Input 1 \(m\)"):
        kiln.function([x], kt.dot(x, kt.dmatrix("m")))  # m is not an input: caught here
    f = kiln.function([x], x.reshape((2, 2)))
    with pytest.raises(kiln.KilnError) as e:
        f([1.0, 2.0, 3.0])  # caught by the server's kernel
    assert e.value.code == "INVALID_ARGUMENT"
    assert "Reshape" in e.value.message


def test_unused_inputs_raise_as_in_aesara(server):
    x, y = kt.dvectors("x", "y")
    with pytest.raises(kiln.KilnError) as e:
        kiln.function([x, y], x * 2)
    assert e.value.code == "INVALID_ARGUMENT"
    assert e.value.message.endswith(
        "the outputs: y.\nTo make this error into a warning, you can pass the parameter "
        "on_unused_input='warn' to aesara.function. To disable it completely, use "
        "on_unused_input='ignore'.")
    f = kiln.function([x, y], x * 2, on_unused_input="ignore")
    np.testing.assert_array_equal(f([1.0], [5.0]), [2.0])


def test_a_shared_variable_only_an_update_writes_is_used(server):
    """An accumulator the outputs never read (adadelta's running averages): Aesara accepts it."""
    x = kt.dvector("x")
    last = kiln.shared(np.zeros(3), name="last")
    f = kiln.function([x], x.sum(), updates=[(last, x * 2)])
    assert f(np.arange(3.0)) == 3.0
    np.testing.assert_array_equal(last.get_value(), [0.0, 2.0, 4.0])


def test_building_functions_run_as_numpy(server):
    n = kt.lscalar("n")
    x = kt.dmatrix("x")
    f = kiln.function([n, x], [kt.zeros((2, 3)), kt.ones((n,)), kt.arange(n), kt.eye(3),
                               kt.alloc(kt.constant(1.5), 2, 2), x.flatten(),
                               kt.special.log_softmax(x), kt.arange(1, n, 2)])
    xv = np.array([[1.0, 2.0], [3.0, 5.0]])
    outs = f(4, xv)
    expected = [np.zeros((2, 3)), np.ones(4), np.arange(4), np.eye(3), np.full((2, 2), 1.5, dtype=np.float32),  # 1.5: float32
                xv.reshape(-1), xv - np.log(np.exp(xv).sum(axis=1, keepdims=True)),
                np.arange(1, 4, 2)]
    for got, want in zip(outs, expected):
        np.testing.assert_allclose(got, want, rtol=1e-12)
        assert got.dtype == np.asarray(want).dtype


def test_inputs_with_a_state_kept_by_the_function(server):
    """In(s, update=..., value=...) on a non-shared input: the function keeps s, each call
    replaces it with the update, a call may override it, fn[s] reads and sets it."""
    u, x, s = kt.dscalars("u", "x", "s")
    acc = kiln.function([u, In(x, value=2), In(s, update=s + x * u, value=1.0)], s * 10)
    assert acc(3) == 10.0 and acc["s"] == 7.0  # the output uses s before the update
    assert acc(1, 5) == 70.0 and acc[s] == 12.0 and acc[x] == 2.0
    acc[s] = 0
    assert acc.value[s] == 0.0 and acc.container[s].value is acc[s]
    assert acc(1, s=100) == 1000.0 and acc[s] == 102.0
    with pytest.raises(TypeError, match="Unknown input or state: y. The function has 3 named "
                                        r"inputs \(u, x, s\)\."):
        acc(1, y=2)
    with pytest.raises(TypeError, match="has no value kept"):
        acc[u]
    with pytest.raises(TypeError, match="input tuple"):
        kiln.function([u, (s, 1.0, 2.0)], s)
    with pytest.raises(TypeError, match="An update must have the same type"):
        kiln.function([In(s, update=kt.dvector("v"), value=0.0)], s)


def test_copy_swaps_shared_variables_and_deletes_updates(server):
    state = kiln.shared(0)
    inc = kt.iscalar("inc")
    acc = kiln.function([inc], state, updates=[(state, state + inc)], name="acc")
    acc(10)
    new_state = kiln.shared(0)
    swapped = acc.copy(swap={state: new_state})
    assert swapped(100) == 0 and new_state.get_value() == 100 and state.get_value() == 10
    assert swapped.name == "acc" and acc.copy(name="b").name == "b"
    frozen = acc.copy(delete_updates=True)
    assert frozen(9000) == 10 and state.get_value() == 10
    with pytest.raises(TypeError, match="conflicts"):
        acc.copy(swap={state: kiln.shared(0.5)})
    with pytest.raises(ValueError, match="not found"):
        acc.copy(swap={new_state: state})
    # A kept input value: copied, or shared with share_memory.
    s, x = kt.dscalar("s"), kt.dscalar("x")
    f = kiln.function([x, kiln.In(s, update=s + x, value=1.0)], s)
    f(2.0)
    g, h = f.copy(), f.copy(share_memory=True)
    g(5.0)
    assert f[s] == 3.0 and g[s] == 8.0
    h(1.0)
    assert f[s] == 4.0
    assert f.copy(delete_updates=True)(7.0) == 4.0 and f[s] == 4.0


def test_an_updated_input_without_a_value_is_required(server):
    s, x = kt.dvector("s"), kt.dvector("x")
    f = kiln.function([x, In(s, update=s + x)], s * 2.0)
    with pytest.raises(TypeError, match="Missing required input"):
        f([1.0])
    np.testing.assert_array_equal(f([1.0], [3.0]), [6.0])
    np.testing.assert_array_equal(f([1.0]), [8.0])  # now it has the updated value, 4


def test_output_subset_trust_input_free_and_get_shared(server):
    x = kt.dvector("x")
    w = kiln.shared(np.ones(3), name="w")
    f = kiln.function([x], [x * 2, x.sum(), (x * w).sum()], updates=[(w, w + 1)])
    assert f.trust_input is False
    f.trust_input = True  # read, not relied on: the values are still checked
    doubled, dot = f(np.arange(3.0), output_subset=[0, 2])
    np.testing.assert_array_equal(doubled, [0.0, 2.0, 4.0])
    assert dot == 3.0 and w.get_value().tolist() == [2.0, 2.0, 2.0]  # the update ran
    assert f(np.arange(3.0), output_subset=[1]) == [3.0]
    assert f.get_shared() == [w]
    f.free()
    f.sync_shared()
    single = kiln.function([x], x.sum())
    assert single(np.ones(2), output_subset=[0]) == [2.0]


def test_a_dict_of_outputs_returns_a_dict(server):
    """Aesara's output_keys: outputs given by name come back by name (sorted keys), through
    output_subset, copy and pickle too."""
    import pickle
    x = kt.dvector("x")
    f = kiln.function([x], {"total": x.sum(), "doubled": x * 2})
    assert f.output_keys == ["doubled", "total"]
    out = f(np.arange(3.0))
    assert sorted(out) == ["doubled", "total"] and out["total"] == 3.0
    np.testing.assert_array_equal(out["doubled"], [0.0, 2.0, 4.0])
    assert f(np.arange(3.0), output_subset=[1]) == {"total": 3.0}
    assert f.copy()(np.ones(2))["total"] == 2.0
    assert pickle.loads(pickle.dumps(f))(np.ones(4))["total"] == 4.0
    with pytest.raises(TypeError, match="keys of a dict of outputs must be strings"):
        kiln.function([x], {1: x})


def test_accept_inplace_guards_against_inplace_ops(server):
    """Aesara's accept_inplace: a graph holding an op that overwrites an input (here a
    Gemm{inplace} built by hand) is refused unless accepted, and then computes as Aesara's."""
    z, x, y = kt.dmatrix("z"), kt.dmatrix("x"), kt.dmatrix("y")
    a, b = kt.dscalar("a"), kt.dscalar("b")
    gemm = kiln.ops.Gemm(inplace=1)
    assert gemm.destroy_map == {0: [0]} and kiln.ops.Gemm().destroy_map == {}
    out = gemm(z, a, x, y, b)
    with pytest.raises(TypeError, match=r"Graph must not contain inplace operations: "
                       r"Gemm\{inplace\}\(z, a, x, y, b\)"):
        kiln.function([z, a, x, y, b], out)
    f = kiln.function([z, a, x, y, b], out, accept_inplace=True)
    zv, xv, yv = np.ones((2, 2)), np.arange(4.0).reshape(2, 2), np.eye(2)
    np.testing.assert_allclose(f(zv, 2.0, xv, yv, 0.5), 0.5 * zv + 2.0 * xv @ yv)
    np.testing.assert_array_equal(zv, np.ones((2, 2)))  # the caller's array is never written
