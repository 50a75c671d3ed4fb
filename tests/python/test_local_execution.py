"""Local execution (kiln.config.execute = "local", Mode(execute="local")): the server compiles
and caches the function, this process fetches it once and runs it. Results equal the server's
bit for bit; shared variables move between this process and the session as the functions that
use them run; errors carry the server's codes."""
import pickle

import numpy as np
import pytest

import kiln
import kiln.tensor as at
from kiln.client import KilnError
from kiln.graph import _core
from kiln.tensor.random.utils import RandomStream
from test_tutorial import logistic_regression

LOCAL = kiln.Mode(execute="local")
SERVER = kiln.Mode(execute="server")


def both(inputs, outputs, **kwargs):
    """The same graph compiled to run on the server and locally."""
    return (kiln.function(inputs, outputs, mode=SERVER, **kwargs),
            kiln.function(inputs, outputs, mode=LOCAL, **kwargs))


def assert_bitwise(a, b):
    a, b = (x if isinstance(x, list) else [x] for x in (a, b))
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x.dtype == y.dtype and x.shape == y.shape
        assert x.tobytes() == y.tobytes()


def test_tiny_function_equals_the_servers(server):
    a = at.dvector("a")
    on_server, local = both([a], a + a ** 10)
    assert local.execute == "local" and local._runner.executable is not None
    x = np.array([1.0, 2.0, 3.0])
    assert_bitwise(on_server(x), local(x))
    assert local.function_id == on_server.function_id  # one compiled function for both
    # Inputs of other layouts: strided, transposed, byte-swapped, Python lists.
    m = at.dmatrix("m")
    on_server, local = both([m], at.exp(m).sum(axis=0) + m[0])
    base = np.arange(24.0).reshape(4, 6) / 10
    for value in (base, base[:, ::2], base.T, base.astype(">f8"), base.tolist()):
        assert_bitwise(on_server(value), local(value))


@pytest.mark.parametrize("dtype", ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                                   "uint32", "uint64", "float16", "float32", "float64",
                                   "complex64", "complex128"])
def test_every_dtype_and_empty_tensors(server, dtype):
    x = at.tensor(dtype, shape=(None, None), name="x")
    on_server, local = both([x], [x, x[::-1], at.as_tensor_variable(x).shape])
    for shape in ((3, 2), (0, 4), (2, 0)):
        value = (np.arange(np.prod(shape)).reshape(shape) % 2).astype(dtype)
        assert_bitwise(on_server(value), local(value))


def test_results_are_fresh_arrays_the_caller_owns(server):
    x = at.dvector("x")
    local = kiln.function([x], [x, x * 1.0], mode=LOCAL)
    value = np.array([1.0, 2.0])
    first, second = local(value)
    first[0] = 7.0  # writing a result changes neither the argument nor the other result
    assert value[0] == 1.0 and second[0] == 1.0
    assert not np.shares_memory(first, value)


def test_tutorial_training_equals_the_servers(server):
    results = []
    for mode in (SERVER, LOCAL):
        X, Y, _, w, b, train, predict = logistic_regression(0.01, mode)
        outs = [train(X, Y) for _ in range(5)]
        results.append((outs, predict(X), w.get_value(), b.get_value()))
    (s_outs, s_pred, s_w, s_b), (l_outs, l_pred, l_w, l_b) = results
    for s, loc in zip(s_outs, l_outs):
        assert_bitwise(s, loc)
    assert_bitwise(s_pred, l_pred)
    assert_bitwise(s_w, l_w)
    assert_bitwise(np.asarray(s_b), np.asarray(l_b))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_benchmark_graphs_equal_the_servers(server, dtype):
    # G1 and G2 (tests/bench/elemwise_vs_numpy.py) over enough elements for the fused loop to
    # split across threads; G3 and G4 (graphs_vs_numpy.py, smaller): costs and gradients.
    rng = np.random.default_rng(7)
    t = at.tensor(dtype, shape=(None,), name="t")
    g1 = t + t ** 10
    g2 = at.exp(-t ** 2) * at.sin(t) + at.log1p(abs(t)) * 0.5 - at.tanh(t)
    on_server, local = both([t], [g1, g2])
    value = rng.uniform(-2, 2, size=100003).astype(dtype)
    assert_bitwise(on_server(value), local(value))
    X, y = at.tensor(dtype, shape=(None, None), name="X"), at.tensor(dtype, shape=(None,), name="y")
    w, b = at.tensor(dtype, shape=(None,), name="w"), at.tensor(dtype, shape=(), name="b")
    g3 = at.mean(at.softplus(-y * (at.dot(X, w) + b)))
    on_server, local = both([X, y, w, b], [g3, *kiln.grad(g3, [w, b])])
    args = [rng.normal(size=(2000, 100)).astype(dtype),
            np.where(np.arange(2000) % 3 == 0, 1.0, -1.0).astype(dtype),
            rng.normal(scale=0.1, size=100).astype(dtype), np.asarray(0.1, dtype)]
    assert_bitwise(on_server(*args), local(*args))
    W1 = at.tensor(dtype, shape=(None, None), name="W1")
    W2 = at.tensor(dtype, shape=(None, None), name="W2")
    labels = at.lvector("labels")
    P = at.softmax(at.dot(at.tanh(at.dot(X, W1)), W2))
    g4 = -at.mean(at.log(P)[at.arange(X.shape[0]), labels])
    on_server, local = both([X, W1, W2, labels], [g4, *kiln.grad(g4, [W1, W2])])
    args = [rng.normal(size=(256, 64)).astype(dtype),
            rng.normal(scale=0.1, size=(64, 128)).astype(dtype),
            rng.normal(scale=0.1, size=(128, 10)).astype(dtype), np.arange(256) % 10]
    assert_bitwise(on_server(*args), local(*args))


def test_shared_values_follow_the_functions_that_use_them(server):
    a = at.dvector("a")
    w = kiln.shared(np.zeros(3), name="w")
    add_here = kiln.function([a], w, updates=[(w, w + a)], mode=LOCAL)
    scale_there = kiln.function([a], w, updates=[(w, w * a)], mode=SERVER)
    x = np.array([1.0, 2.0, 3.0])
    add_here(x)
    add_here(x)
    np.testing.assert_array_equal(w.get_value(), [2, 4, 6])
    np.testing.assert_array_equal(scale_there(x), [2, 4, 6])  # the session got the local value
    np.testing.assert_array_equal(w.get_value(), [2, 8, 18])
    np.testing.assert_array_equal(add_here(x), [2, 8, 18])  # and back
    w.set_value(np.ones(3))
    np.testing.assert_array_equal(add_here(x), [1, 1, 1])
    np.testing.assert_array_equal(scale_there(x), [2, 3, 4])


def test_random_streams_and_scan_equal_the_servers(server):
    draws = []
    for mode in (SERVER, LOCAL):
        srng = RandomStream(seed=42)
        u = srng.normal(0, 1, size=(3, 4))
        f = kiln.function([], u, mode=mode)
        draws.append([f() for _ in range(3)])
    for s, loc in zip(*draws):
        assert_bitwise(s, loc)
    k, A = at.iscalar("k"), at.dvector("A")
    powers, _ = kiln.scan(lambda prior, A: prior * A, outputs_info=at.ones_like(A),
                          non_sequences=A, n_steps=k)
    on_server, local = both([A, k], powers[-1])
    assert_bitwise(on_server(np.arange(5.0), 7), local(np.arange(5.0), 7))


def test_printed_values_are_shown_locally(server, capsys):
    x = at.dvector("x")
    local = kiln.function([x], kiln.printing.Print("here")(x) * 2, mode=LOCAL)
    np.testing.assert_array_equal(local(np.array([1.0, 2.0])), [2.0, 4.0])
    assert capsys.readouterr().out == "here __str__ = [1. 2.]\n"


def test_plain_arrays_take_the_native_fast_path(server):
    """Arrays of the inputs' dtypes and ranks go straight to the native call; anything else takes
    the general path, which filters as Aesara does, with the same results."""
    a = at.dvector("a")
    local = kiln.function([a], a + a ** 10, mode=LOCAL)
    x = np.array([1.0, 2.0, 3.0])
    assert_bitwise(local._runner.fast((x,)), local(x))
    for other in (x.astype(np.float32), x.reshape(3, 1), np.ma.masked_array(x), [1.0, 2.0]):
        assert local._runner.fast((other,)) is NotImplemented
    assert local._runner.fast((x, x)) is NotImplemented
    assert_bitwise(local(x.astype(np.float32)), local(x))
    pair = kiln.function([a], [a, a * 2], mode=LOCAL)
    assert isinstance(pair._runner.fast((x,)), list)
    # A function that holds shared values, updates them or prints runs through Python.
    s = kiln.shared(np.zeros(3), name="s_fast")
    assert kiln.function([a], a + s, mode=LOCAL)._runner.fast is None
    assert kiln.function([a], a, updates=[(s, s + a)], mode=LOCAL)._runner.fast is None
    assert kiln.function([a], kiln.printing.Print("a")(a), mode=LOCAL)._runner.fast is None


def test_inputs_with_static_dims_take_the_fast_path_when_they_fit(server):
    """An input of static shape (3, ?) takes the native call for arrays of that shape; an array
    of another length on the static dim is refused by the general path, as before."""
    m = at.tensor("float64", shape=(3, None), name="m")
    local = kiln.function([m], m * 2.0, mode=LOCAL)
    assert local._runner.fast is not None
    x = np.arange(12.0).reshape(3, 4)
    assert_bitwise(local._runner.fast((x,)), x * 2.0)
    assert_bitwise(local(x), x * 2.0)
    wrong = np.arange(8.0).reshape(2, 4)
    assert local._runner.fast((wrong,)) is NotImplemented
    with pytest.raises(TypeError, match="not compatible") as fast_error:
        local(wrong)
    with pytest.raises(TypeError) as general_error:
        local._call((wrong,), {})
    assert str(fast_error.value) == str(general_error.value)


def test_errors_carry_the_servers_codes(server):
    m = at.dmatrix("m")
    on_server, local = both([m], at.dot(m, m))
    bad = np.ones((2, 3))
    with pytest.raises(KilnError) as there:
        on_server(bad)
    with pytest.raises(KilnError) as here:
        local(bad)
    assert here.value.code == there.value.code == "INVALID_ARGUMENT"
    with pytest.raises(TypeError):  # the client's own check, as on the server path
        local(np.ones((2, 2), dtype=np.complex128))
    with pytest.raises(_core.CallError) as raw:  # the native module's own, by code
        local._runner.executable([bad])
    assert raw.value.args[0] == "INVALID_ARGUMENT" and "Dot" in raw.value.args[1]


def test_native_executable_checks_what_it_loads(server):
    with pytest.raises(_core.CallError) as corrupt:
        _core.Executable(b"\x08\x07garbage")
    assert corrupt.value.args[0] == "DATA_LOSS"
    a = at.dvector("a")
    exe = kiln.function([a], a * 2, mode=LOCAL)._runner.executable
    assert (exe.n_inputs, exe.n_outputs) == (1, 1)
    with pytest.raises(_core.CallError) as wrong_count:
        exe([])
    assert wrong_count.value.args[0] == "INVALID_ARGUMENT"
    with pytest.raises(_core.CallError):
        exe([object()])


def test_config_and_mode_choose_where_calls_run(server):
    a = at.dvector("a")
    saved = kiln.config.execute
    try:
        kiln.config.execute = "local"
        assert kiln.function([a], a + 1).execute == "local"
        assert kiln.function([a], a + 1, mode=SERVER).execute == "server"
        kiln.config.execute = "nowhere"
        with pytest.raises(ValueError, match="execute"):
            kiln.function([a], a + 1)
    finally:
        kiln.config.execute = saved
    assert kiln.function([a], a + 1).execute == "server"
    with pytest.raises(ValueError, match="execute"):
        kiln.Mode(execute="elsewhere")
    with pytest.raises(ValueError, match="server only"):
        kiln.function([a], a + 1, mode=LOCAL, profile=True)


def test_a_function_cached_by_another_client_costs_one_fetch(server):
    a = at.dvector("a")
    graph = at.sin(a) * 3 + at.cos(a)
    kiln.function([a], graph, mode=SERVER)
    local = kiln.function([a], graph, mode=LOCAL)
    assert local.source == "memory"
    np.testing.assert_array_equal(local(np.zeros(2)), [1.0, 1.0])


def test_copies_and_pickles_stay_local(server):
    a = at.dvector("a")
    w = kiln.shared(np.ones(2), name="w")
    f = kiln.function([a], a * w, updates=[(w, w + 1)], mode=LOCAL)
    f(np.ones(2))
    g = f.copy(delete_updates=True)
    assert g.execute == "local"
    np.testing.assert_array_equal(g(np.ones(2)), [2.0, 2.0])
    h = pickle.loads(pickle.dumps(f))
    assert h.execute == "local"
    np.testing.assert_array_equal(h(np.ones(2)), [2.0, 2.0])
