"""kiln.scan with `import kiln as aesara`: Aesara's loop tutorial examples (power by iteration,
polynomial coefficients, the Jacobian by scan, the accumulating shared variable, taps, until)
against NumPy and the values Aesara 2.9.4 printed, and gradients through time against finite
differences."""
import numpy as np
import pytest

import kiln as aesara
import kiln.tensor as at
from kiln.scan.utils import until


def test_power_by_iteration(server):
    k = at.iscalar("k")
    A = at.vector("A")
    result, updates = aesara.scan(fn=lambda prior_result, A: prior_result * A,
                                  outputs_info=at.ones_like(A), non_sequences=A, n_steps=k)
    assert len(updates) == 0
    power = aesara.function(inputs=[A, k], outputs=result[-1], updates=updates)
    np.testing.assert_allclose(power(range(10), 2), np.arange(10.0) ** 2)
    np.testing.assert_allclose(power(range(10), 4), np.arange(10.0) ** 4)
    assert str(result.owner.inputs[0].owner.op if result.owner.op.kind != "Scan"
               else result.owner.op) == "for{cpu,scan_fn}"


def test_polynomial_coefficients(server):
    coefficients = at.vector("coefficients")
    x = at.scalar("x")
    max_coefficients_supported = 10000
    components, updates = aesara.scan(
        fn=lambda coefficient, power, free_variable: coefficient * (free_variable ** power),
        outputs_info=None,
        sequences=[coefficients, at.arange(max_coefficients_supported)],
        non_sequences=x)
    polynomial = components.sum()
    calculate_polynomial = aesara.function(inputs=[coefficients, x], outputs=polynomial)
    assert calculate_polynomial(np.asarray([1, 0, 2], dtype=np.float64), 3) == 19.0


def test_triangular_numbers_and_the_upcast_error(server):
    up_to = at.iscalar("up_to")

    def accumulate_by_adding(arange_val, sum_to_date):
        return sum_to_date + arange_val

    seq = at.arange(up_to)
    outputs_info = at.as_tensor_variable(np.asarray(0, seq.dtype))
    scan_result, _ = aesara.scan(fn=accumulate_by_adding, outputs_info=outputs_info,
                                 sequences=seq)
    triangular = aesara.function(inputs=[up_to], outputs=scan_result)
    np.testing.assert_array_equal(triangular(15), np.cumsum(np.arange(15)))
    with pytest.raises(ValueError, match="has dtype int8, while the result of the inner "
                                         "function"):
        aesara.scan(fn=accumulate_by_adding, outputs_info=at.as_tensor_variable(0),
                    sequences=seq)


def test_jacobian_and_hessian_by_scan(server):
    x = at.dvector("x")
    y = x ** 2
    J, updates = aesara.scan(lambda i, y, x: aesara.grad(y[i], x),
                             sequences=at.arange(y.shape[0]), non_sequences=[y, x])
    f = aesara.function([x], J, updates=updates)
    np.testing.assert_allclose(f([4, 4]), [[8.0, 0.0], [0.0, 8.0]])
    cost = y.sum()
    gy = aesara.grad(cost, x)
    H, updates = aesara.scan(lambda i, gy, x: aesara.grad(gy[i], x),
                             sequences=at.arange(gy.shape[0]), non_sequences=[gy, x])
    f = aesara.function([x], H, updates=updates)
    np.testing.assert_allclose(f([4, 4]), [[2.0, 0.0], [0.0, 2.0]])


def test_accumulating_shared_variable(server):
    k = aesara.shared(0)
    n_sym = at.iscalar("n_sym")
    results, updates = aesara.scan(lambda: {k: (k + 1)}, n_steps=n_sym)
    assert results is None
    assert list(updates.keys()) == [k]
    accumulator = aesara.function([n_sym], [], updates=updates, allow_input_downcast=True)
    assert k.get_value() == 0
    accumulator(5)
    assert k.get_value() == 5
    accumulator(5)
    assert k.get_value() == 10
    accumulator(0)
    assert k.get_value() == 10


def test_shared_variable_read_and_updated(server):
    a = aesara.shared(1)
    values, updates = aesara.scan(lambda: {a: a + 1}, n_steps=10)
    b = a + 1
    c = updates[a] + 1
    f = aesara.function([], [b, c], updates=updates)
    assert [int(v) for v in f()] == [2, 12] and a.get_value() == 11
    assert [int(v) for v in f()] == [12, 22] and a.get_value() == 21


def test_taps_as_aesara_reads_them(server):
    x = at.dvector("x")
    fwd, _ = aesara.scan(lambda a, b, c: 100 * a + 10 * b + c,
                         sequences=dict(input=x, taps=[-1, 0, 1]))
    back, _ = aesara.scan(lambda a, b, c: 100 * a + 10 * b + c,
                          sequences=dict(input=x, taps=[-1, 0, 1]), go_backwards=True)
    f = aesara.function([x], [fwd, back])
    got_fwd, got_back = f([1.0, 2.0, 3.0, 4.0, 5.0])
    np.testing.assert_array_equal(got_fwd, [123, 234, 345])
    np.testing.assert_array_equal(got_back, [345, 234, 123])
    init = at.dvector("init")
    fib, _ = aesara.scan(lambda a, b: a + b, outputs_info=[dict(initial=init, taps=[-2, -1])],
                         n_steps=5)
    g = aesara.function([init], fib)
    np.testing.assert_array_equal(g([100.0, 1.0, 2.0]), [101, 102, 203, 305, 508])


def test_until(server):
    max_value = at.scalar()

    def power_of_2(previous_power, max_value):
        return previous_power * 2, until(previous_power * 2 > max_value)

    values, _ = aesara.scan(power_of_2, outputs_info=at.constant(1.0),
                            non_sequences=max_value, n_steps=1024)
    f = aesara.function([max_value], values)
    np.testing.assert_array_equal(f(45), [2.0, 4.0, 8.0, 16.0, 32.0, 64.0])
    np.testing.assert_array_equal(f(1), [2.0])


def test_map_reduce_foldl_foldr(server):
    X = at.dmatrix("X")
    rows, _ = aesara.map(lambda row: at.exp(row).sum(), sequences=X)
    total, _ = aesara.reduce(lambda row, acc: acc + row, sequences=X,
                             outputs_info=at.zeros_like(X[0]))
    left, _ = aesara.foldl(lambda row, acc: acc * 2 + row, sequences=X,
                           outputs_info=at.zeros_like(X[0]))
    right, _ = aesara.foldr(lambda row, acc: acc * 2 + row, sequences=X,
                            outputs_info=at.zeros_like(X[0]))
    f = aesara.function([X], [rows, total, left, right])
    xv = np.arange(6.0).reshape(3, 2)
    got = f(xv)
    np.testing.assert_allclose(got[0], np.exp(xv).sum(axis=1))
    np.testing.assert_allclose(got[1], xv.sum(axis=0))
    np.testing.assert_allclose(got[2], 4 * xv[0] + 2 * xv[1] + xv[2])
    np.testing.assert_allclose(got[3], xv[0] + 2 * xv[1] + 4 * xv[2])


def test_rnn_gradient_through_time_against_finite_differences(server):
    rng = np.random.default_rng(0)
    X = at.dmatrix("X")
    h0 = at.dvector("h0")
    W = at.dmatrix("W")
    hs, _ = aesara.scan(lambda x_t, h, W: at.tanh(x_t + at.dot(h, W)), sequences=X,
                        outputs_info=h0, non_sequences=W)
    cost = (hs ** 2).sum()
    grads = aesara.grad(cost, [X, h0, W])
    f = aesara.function([X, h0, W], [cost] + grads)
    xv, hv, wv = rng.normal(size=(5, 3)), rng.normal(size=3), 0.5 * rng.normal(size=(3, 3))

    def numpy_cost(xv, hv, wv):
        h, total = hv, 0.0
        for x_t in xv:
            h = np.tanh(x_t + h @ wv)
            total += (h ** 2).sum()
        return total

    out = f(xv, hv, wv)
    assert out[0] == pytest.approx(numpy_cost(xv, hv, wv))
    eps = 1e-6
    for arg, value in enumerate([xv, hv, wv]):
        numeric = np.zeros_like(value)
        for idx in np.ndindex(value.shape):
            plus = [v.copy() for v in (xv, hv, wv)]
            minus = [v.copy() for v in (xv, hv, wv)]
            plus[arg][idx] += eps
            minus[arg][idx] -= eps
            numeric[idx] = (numpy_cost(*plus) - numpy_cost(*minus)) / (2 * eps)
        np.testing.assert_allclose(out[1 + arg], numeric, rtol=1e-6, atol=1e-8)


def test_the_inner_graph_is_printed(server):
    k = at.iscalar("k")
    A = at.dvector("A")
    result, _ = aesara.scan(fn=lambda prior_result, A: prior_result * A,
                            outputs_info=at.ones_like(A), non_sequences=A, n_steps=k)
    text = aesara.dprint(result, file="str")
    assert "for{cpu,scan_fn}" in text
    assert "Inner graphs:" in text
    assert " >Elemwise{mul,no_inplace}" in text
    assert "*0-<TensorType(float64, (?,))>" in text


def test_errors(server):
    x = at.dvector("x")
    with pytest.raises(ValueError, match="n_steps"):
        aesara.scan(lambda: x * 2)
    n = at.lscalar("n")
    doubled, _ = aesara.scan(lambda v: v * 2, sequences=x, n_steps=n)
    g = aesara.function([x, n], doubled)
    with pytest.raises(aesara.KilnError, match="sequence 0 has 3 entries, but 5 steps"):
        g([1.0, 2.0, 3.0], 5)


def test_rop_through_scan_and_grad_through_until(server):
    x, v = at.dvectors("x", "v")
    out, _ = aesara.scan(lambda xi, acc: acc * xi + at.sin(xi), sequences=[x],
                         outputs_info=[at.constant(np.array(1.0))])
    jv = aesara.function([x, v], aesara.gradient.Rop(out[-1], x, v))

    def last(xs):
        acc = 1.0
        for xi in xs:
            acc = acc * xi + np.sin(xi)
        return acc
    xv, vv, eps = np.array([0.3, -0.2, 0.5]), np.array([1.0, 2.0, -1.0]), 1e-6
    np.testing.assert_allclose(jv(xv, vv), (last(xv + eps * vv) - last(xv - eps * vv)) / (2 * eps),
                               rtol=1e-7)
    # The loop stops after the step whose condition holds; the gradient flows through the steps
    # that ran only.
    stop, _ = aesara.scan(lambda xi, acc: (acc + xi, until(acc > 2.0)), sequences=[x],
                          outputs_info=[at.constant(np.array(0.0))])
    values, g = aesara.function([x], [stop, aesara.grad(stop[-1], x)])(np.array([1, 1.5, 2, 3.0]))
    np.testing.assert_array_equal(values, [1.0, 2.5, 4.5])
    np.testing.assert_array_equal(g, [1.0, 1.0, 1.0, 0.0])


def test_products_of_sequences_moved_out_of_the_loop(server):
    """dot(x[t], W) leaves the loop as one product (scan_pushout_seq_dot): with static shapes,
    go_backwards, and beside a sequence read at two taps (which stays in), against NumPy."""
    rng = np.random.default_rng(0)
    X = at.tensor("float64", shape=(4, 2, 3), name="X")
    W = at.tensor("float64", shape=(3, 2), name="W")
    h0 = at.dmatrix("h0")
    hs, _ = aesara.scan(lambda x, h, W: at.tanh(at.dot(x, W) + h), sequences=[X],
                        outputs_info=[h0], non_sequences=[W])
    x, w, h = rng.normal(size=(4, 2, 3)), rng.normal(size=(3, 2)), np.zeros((2, 2))
    want = h
    for t in range(4):
        want = np.tanh(x[t] @ w + want)
    np.testing.assert_allclose(aesara.function([X, h0, W], hs[-1])(x, h, w), want, rtol=1e-13)
    v = at.dmatrix("v")
    two, _ = aesara.scan(lambda a, b, W: at.dot(a, W) + at.dot(b, W),
                         sequences=[dict(input=v, taps=[0, 1])], non_sequences=[W])
    back, _ = aesara.scan(lambda a, W: at.dot(a, W), sequences=[v], non_sequences=[W],
                          go_backwards=True)
    vv = rng.normal(size=(5, 3))
    got_two, got_back = aesara.function([v, W], [two, back])(vv, w)
    np.testing.assert_allclose(got_two, vv[:-1] @ w + vv[1:] @ w, rtol=1e-13)
    np.testing.assert_allclose(got_back, vv[::-1] @ w, rtol=1e-13)


def test_numpy_scalar_initial_states_keep_their_dtype(server):
    """outputs_info=np.float64(0) is a float64 state, as in Aesara (np.float64 is a Python float
    subclass, yet a NumPy scalar keeps its dtype), so loops whose step gives float64 run; the
    values are those Aesara 2.9.4 computed."""
    v = at.dvector("v")
    running, _ = aesara.scan(lambda x, acc: acc + x, sequences=v, outputs_info=np.float64(0))
    assert running.dtype == "float64"
    np.testing.assert_array_equal(aesara.function([v], running)([1.0, 2.0, 3.5]),
                                  [1.0, 3.0, 6.5])
    f = at.fvector("f")
    decayed, _ = aesara.scan(lambda x, acc: acc * 0.9 + x, sequences=f,
                             outputs_info=np.float64(0))
    assert decayed.dtype == "float64"
    np.testing.assert_allclose(
        aesara.function([f], decayed)(np.array([1, 2, 3, 4], dtype="float32")),
        [1.0, 2.9, 5.609999999999999, 9.049], rtol=1e-15)
    k = at.iscalar("k")
    grown, _ = aesara.scan(lambda acc: acc * np.float64(1.5) + np.int64(1),
                           outputs_info=np.float64(0.1), n_steps=k)
    assert grown.dtype == "float64"
    np.testing.assert_allclose(aesara.function([k], grown)(4),
                               [1.15, 2.7249999999999996, 5.0874999999999995, 8.63125],
                               rtol=1e-15)
    with pytest.raises(ValueError, match="has dtype float32, while the result of the inner "
                                         "function"):
        aesara.scan(lambda x, acc: acc + x, sequences=v, outputs_info=np.float32(0))
