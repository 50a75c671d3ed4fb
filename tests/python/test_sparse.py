"""kiln.sparse against SciPy and NumPy: every op's values on random CSR and CSC matrices (float32
and float64; empty rows, an all-zero matrix, rectangular shapes), gradients by central finite
differences on the stored entries, sparse shared variables with updates, pickled functions,
Aesara's types, dtypes and errors (checked against Aesara 2.9.4), and printing."""
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as ss

import kiln
import kiln.sparse as sp
import kiln.tensor as kt
from kiln.compile.sparse import SparseValueError

FORMATS = ["csr", "csc"]
DTYPES = ["float32", "float64"]
SHAPE = (4, 5)


def tolerance(dtype):
    return {"rtol": 2e-5, "atol": 2e-5} if dtype == "float32" else {"rtol": 1e-10,
                                                                     "atol": 1e-12}


def random_matrix(shape, fmt, dtype, seed, density=0.45, positive=False):
    """A random matrix of shape with its first row and last column empty (when it has more
    than one of each)."""
    rng = np.random.default_rng(seed)
    dense = rng.standard_normal(shape) * (rng.random(shape) < density)
    if positive:
        dense = np.abs(dense) + (dense != 0) * 0.1
    if shape[0] > 1:
        dense[0] = 0
    if shape[1] > 1:
        dense[:, -1] = 0
    return ss.csr_matrix(dense.astype(dtype)).asformat(fmt)


def matrices(fmt, dtype, shape=SHAPE, seed=0, positive=False):
    """The matrices each op is checked on: two random ones, an all-zero one, one with a single
    entry."""
    single = np.zeros(shape, dtype=dtype)
    single[-1, 0] = 1.5
    return [random_matrix(shape, fmt, dtype, seed, positive=positive),
            random_matrix(shape, fmt, dtype, seed + 1, density=0.8, positive=positive),
            ss.csr_matrix(shape, dtype=dtype).asformat(fmt),
            ss.csr_matrix(single).asformat(fmt)]


def dense(shape, dtype, seed):
    return np.random.default_rng(seed + 100).standard_normal(shape).astype(dtype)


def check_value(got, want, dtype, fmt=None):
    """got (a kiln result) equals want (SciPy's or NumPy's): a canonical SciPy matrix of
    format fmt when fmt is given, else a NumPy array; of dtype."""
    if fmt is not None:
        assert ss.issparse(got) and got.format == fmt, (type(got), fmt)
        assert got.has_canonical_format
        got = got.toarray()
    want = want.toarray() if ss.issparse(want) else np.asarray(want)
    assert isinstance(got, np.ndarray) and got.dtype == dtype, (type(got), got.dtype, dtype)
    np.testing.assert_allclose(got, want, **tolerance(dtype))


def sparse_input(fmt, dtype, name):
    return sp.matrix(fmt, name, dtype)


# --- values ------------------------------------------------------------------------------------

# (name, builder of the expression from x (sparse) and d (dense, x's shape), SciPy's value,
#  the result's format: None for dense, "x" for x's)
UNARY_CASES = [
    ("toarray", lambda x, d: x.toarray(), lambda m, a: m.toarray(), None),
    ("dense_from_sparse", lambda x, d: sp.dense_from_sparse(x), lambda m, a: m, None),
    ("transpose", lambda x, d: x.T, lambda m, a: m.T, "T"),
    ("neg", lambda x, d: -x, lambda m, a: -m, "x"),
    ("mul_scalar", lambda x, d: x * 3, lambda m, a: m * 3, "x"),
    ("mul_dense", lambda x, d: x * d, lambda m, a: m.multiply(a), "x"),
    ("dense_mul", lambda x, d: d * x, lambda m, a: m.multiply(a), "x"),
    ("add_dense", lambda x, d: x + d, lambda m, a: m + a, None),
    ("sub_dense", lambda x, d: d - x, lambda m, a: a - m, None),
    ("sp_sum", lambda x, d: sp.sp_sum(x), lambda m, a: np.asarray(m.sum()), None),
    ("sp_sum_0", lambda x, d: sp.sp_sum(x, 0), lambda m, a: np.asarray(m.sum(0)).ravel(), None),
    ("sp_sum_1", lambda x, d: x.sum(1), lambda m, a: np.asarray(m.sum(1)).ravel(), None),
    ("row_scale", lambda x, d: sp.row_scale(x, d[:, 0]),
     lambda m, a: ss.diags(a[:, 0]) @ m, "x"),
    ("col_scale", lambda x, d: sp.col_scale(x, d[0]), lambda m, a: m @ ss.diags(a[0]), "x"),
    ("mul_s_v", lambda x, d: sp.mul_s_v(x, d[0]), lambda m, a: m.multiply(a[0]), "x"),
    ("structured_add_s_v", lambda x, d: sp.structured_add_s_v(x, d[0]),
     lambda m, a: m + (m != 0).multiply(a[0]), "x"),
    ("sp_ones_like", lambda x, d: sp.sp_ones_like(x), lambda m, a: (m != 0) * 1.0, "x"),
    ("sp_zeros_like", lambda x, d: x.zeros_like(), lambda m, a: m * 0, "x"),
    ("remove0", lambda x, d: sp.remove0(x * d), lambda m, a: m.multiply(a), "x"),
    ("ensure_sorted_indices", lambda x, d: sp.ensure_sorted_indices(x), lambda m, a: m, "x"),
    ("csr_from_dense", lambda x, d: sp.csr_from_dense(x.toarray()), lambda m, a: m, "csr"),
    ("csc_from_dense", lambda x, d: sp.csc_from_dense(d * x.toarray()),
     lambda m, a: m.multiply(a), "csc"),
    ("structured_exp", lambda x, d: sp.structured_exp(x), lambda m, a: m.expm1() + (m != 0),
     "x"),
    ("structured_pow", lambda x, d: sp.structured_pow(x, 2), lambda m, a: m.power(2), "x"),
    ("structured_minimum", lambda x, d: sp.structured_minimum(x, 0.5),
     lambda m, a: m.minimum(0.5), "x"),
    ("structured_add", lambda x, d: sp.structured_add(x, 1), lambda m, a: m + (m != 0), "x"),
    ("sin", lambda x, d: sp.sin(x), lambda m, a: m.sin(), "x"),
    ("tanh", lambda x, d: sp.tanh(x), lambda m, a: m.tanh(), "x"),
    ("square", lambda x, d: sp.square(x), lambda m, a: m.power(2), "x"),
    ("rint", lambda x, d: sp.rint(x * 3), lambda m, a: (m * 3).rint(), "x"),
    ("sgn", lambda x, d: sp.sgn(x), lambda m, a: m.sign(), "x"),
    ("trunc", lambda x, d: sp.trunc(x * 3), lambda m, a: (m * 3).trunc(), "x"),
    ("expm1", lambda x, d: sp.expm1(x), lambda m, a: m.expm1(), "x"),
    ("cast", lambda x, d: sp.cast(x, "int32"), lambda m, a: m.astype("int32"), "x"),
    ("lt_dense", lambda x, d: x < d, lambda m, a: (m.toarray() < a).astype("uint8"), None),
    ("dense_ge", lambda x, d: d >= x, lambda m, a: (a >= m.toarray()).astype("uint8"), None),
    ("getitem_scalar", lambda x, d: x[3, 0], lambda m, a: np.asarray(m[3, 0]), None),
    ("getitem_slice", lambda x, d: x[1:3, 0:4], lambda m, a: m[1:3, 0:4], "x"),
]


def _result_format(kind, fmt):
    if kind == "x":
        return fmt
    if kind == "T":
        return "csc" if fmt == "csr" else "csr"
    return kind


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_unary_ops_match_scipy(server, fmt, dtype):
    x, d = sparse_input(fmt, dtype, "x"), kt.matrix("d", dtype=dtype)
    exprs = [build(x, d) for _, build, _, _ in UNARY_CASES]
    f = kiln.function([x, d], exprs, on_unused_input="ignore")
    a = dense(SHAPE, dtype, 0)
    for m in matrices(fmt, dtype):
        for (name, _, want, kind), expr, got in zip(UNARY_CASES, exprs, f(m, a)):
            out_fmt = _result_format(kind, fmt)
            want_value = want(m, a)
            if out_fmt is not None:
                want_value = ss.csr_matrix(want_value)
            expected_dtype = expr.dtype
            try:
                check_value(got, want_value, expected_dtype, out_fmt)
            except AssertionError as e:
                raise AssertionError("%s on %s %s nnz=%d: %s" % (name, fmt, dtype, m.nnz, e))


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("other", FORMATS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_sparse_with_sparse_matches_scipy(server, fmt, other, dtype):
    x, y = sparse_input(fmt, dtype, "x"), sparse_input(other, dtype, "y")
    cases = [
        (x + y, lambda m, n: m + n, fmt), (x - y, lambda m, n: m - n, fmt),
        (x * y, lambda m, n: m.multiply(n), fmt),
        (sp.structured_dot(x, y.T), lambda m, n: m @ n.T, fmt),
        (sp.dot(x, y.T), lambda m, n: (m @ n.T).toarray(), None),
        (sp.true_dot(x.T, y), lambda m, n: m.T @ n, "csc" if fmt == "csr" else "csr"),
        (sp.hstack([x, y]), lambda m, n: ss.hstack([m, n]), "csc"),
        (sp.vstack([x, y], format="csr"), lambda m, n: ss.vstack([m, n]), "csr"),
        (sp.add_s_s_data(x, sp.sp_ones_like(x)), lambda m, n: m + (m != 0), fmt),
    ]
    if fmt == other:  # (Aesara compares two sparse matrices of one format only)
        cases += [(x > y, lambda m, n: (m.toarray() > n.toarray()).astype("uint8"), fmt),
                  (sp.eq(x, y), lambda m, n: (m.toarray() == n.toarray()).astype("uint8"), fmt)]
    f = kiln.function([x, y], [e for e, _, _ in cases])
    ms, ns = matrices(fmt, dtype), matrices(other, dtype, seed=7)
    for m, n in zip(ms, ns[1:] + ns[:1]):
        for (expr, want, out_fmt), got in zip(cases, f(m, n)):
            want_value = want(m, n)
            check_value(got, ss.csr_matrix(want_value) if out_fmt else want_value,
                        expr.dtype, out_fmt)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 5), (5, 3), (1, 6)])
def test_products_with_dense_match_numpy(server, fmt, dtype, shape):
    x = sparse_input(fmt, dtype, "x")
    b, a = kt.matrix("b", dtype=dtype), kt.matrix("a", dtype=dtype)
    v, w = kt.vector("v", dtype=dtype), kt.vector("w", dtype=dtype)
    p = sparse_input(fmt, dtype, "p")
    cases = [
        (sp.structured_dot(x, b), lambda m, B, A, V, W, P: m @ B),
        (sp.structured_dot(a, x), lambda m, B, A, V, W, P: A @ m),
        (x.dot(b), lambda m, B, A, V, W, P: m @ B),
        (sp.dot(x, b), lambda m, B, A, V, W, P: m @ B),
        (sp.dot(a, x), lambda m, B, A, V, W, P: A @ m),
        (x @ b, lambda m, B, A, V, W, P: m @ B),
        (a @ x, lambda m, B, A, V, W, P: A @ m),
        (sp.dot(x, v), lambda m, B, A, V, W, P: m @ V),
        (sp.dot(w, x), lambda m, B, A, V, W, P: W @ m),
        (sp.true_dot(x, b).toarray(), lambda m, B, A, V, W, P: m @ B),
        (sp.sampling_dot(b, b, p).toarray(),
         lambda m, B, A, V, W, P: P.multiply(B @ B.T).toarray()),
        (sp.usmm(2.0, x, b, a.T @ b.T * 0 + 1),
         lambda m, B, A, V, W, P: 2 * (m @ B) + 1),
    ]
    f = kiln.function([x, b, a, v, w, p], [e for e, _ in cases])
    n_rows, n_cols = shape
    B, A = dense((n_cols, 3), dtype, 1), dense((2, n_rows), dtype, 2)
    V, W = dense((n_cols,), dtype, 3), dense((n_rows,), dtype, 4)
    for m in matrices(fmt, dtype, shape):
        P = random_matrix((n_cols, n_cols), fmt, dtype, 9)
        for (expr, want), got in zip(cases, f(m, B, A, V, W, P)):
            check_value(got, want(m, B, A, V, W, P), expr.dtype)


@pytest.mark.parametrize("fmt", FORMATS)
def test_square_matrices_diag_and_square_diagonal(server, fmt):
    x, v = sparse_input(fmt, "float64", "x"), kt.dvector("v")
    f = kiln.function([x, v], [sp.diag(x), sp.square_diagonal(v)])
    for m in matrices(fmt, "float64", (4, 4)):
        vec = dense((3,), "float64", 5)
        got_diag, got_square = f(m, vec)
        check_value(got_diag, m.diagonal(), "float64")
        check_value(got_square, ss.diags(vec), "float64", "csc")


def test_structured_functions_on_positive_entries(server):
    x = sparse_input("csr", "float64", "x")
    names = ["sqrt", "structured_log", "log1p", "arcsin", "arctan", "sinh", "arcsinh",
             "arctanh", "tan", "ceil", "floor", "deg2rad", "rad2deg", "structured_sigmoid",
             "structured_maximum", "structured_minimum"]
    args = {"structured_maximum": (0.3,), "structured_minimum": (0.3,)}
    numpy_fns = {"structured_log": np.log, "structured_sigmoid": lambda a: 1 / (1 + np.exp(-a)),
                 "structured_maximum": lambda a: np.maximum(a, 0.3),
                 "structured_minimum": lambda a: np.minimum(a, 0.3)}
    f = kiln.function([x], [getattr(sp, n)(x * 0.5, *args.get(n, ())) for n in names])
    m = random_matrix(SHAPE, "csr", "float64", 3, positive=True)
    m.data = np.clip(m.data, 0.05, 1.5)
    for name, got in zip(names, f(m)):
        half = m * 0.5
        want = half.copy()
        want.data = (numpy_fns[name] if name in numpy_fns else getattr(np, name))(half.data)
        check_value(got, want, "float64", "csr")


def test_integer_and_empty_shapes(server):
    x = sp.csr_matrix("x", dtype="int32")
    f = kiln.function([x], [x.toarray(), sp.sp_sum(x, 0), x * 2,
                            sp.structured_dot(x, kt.constant(np.ones((3, 2))))])
    m = ss.csr_matrix(np.array([[0, 2, 0], [1, 0, 0]], dtype="int32"))
    dense_m, col_sums, doubled, product = f(m)
    assert dense_m.dtype == np.int32 and (dense_m == m.toarray()).all()
    assert col_sums.dtype == np.int32 and list(col_sums) == [1, 2, 0]
    assert doubled.dtype == np.int32 and (doubled.toarray() == 2 * m.toarray()).all()
    assert product.dtype == np.float64 and np.allclose(product, m @ np.ones((3, 2)))
    square = kiln.function([x], sp.structured_dot(x, x.T))(m)
    assert square.dtype == np.int32 and (square.toarray() == (m @ m.T).toarray()).all()
    g = kiln.function([x], [x.toarray(), sp.sp_sum(x, 1), x.T])
    empty = ss.csr_matrix((0, 3), dtype="int32")
    got_dense, got_sums, got_t = g(empty)
    assert got_dense.shape == (0, 3) and got_sums.shape == (0,) and got_t.shape == (3, 0)


# --- gradients ---------------------------------------------------------------------------------

def check_gradients(cost_of, values, eps=1e-6):
    """kiln.grad of cost_of(*inputs) against central differences: a sparse input's gradient is
    the matrix of its structure whose data are the cost's derivatives by its stored entries."""
    inputs = [sp.matrix(v.format, "in%d" % k, v.dtype.name) if ss.issparse(v)
              else kt.tensor(v.dtype.name, (None,) * v.ndim, name="in%d" % k)
              for k, v in enumerate(values)]
    cost = cost_of(*inputs)
    grads = kiln.grad(cost, inputs)
    for v, g in zip(inputs, grads):
        assert type(g) is type(v) if isinstance(v, sp.SparseVariable) else True
    f_cost = kiln.function(inputs, cost)
    analytic = kiln.function(inputs, grads)(*values)
    for k, value in enumerate(values):
        entries = value.data if ss.issparse(value) else value.reshape(-1)
        numeric = np.zeros(entries.size)
        for j in range(entries.size):
            saved = entries[j]
            entries[j] = saved + eps
            up = float(f_cost(*values))
            entries[j] = saved - eps
            down = float(f_cost(*values))
            entries[j] = saved
            numeric[j] = (up - down) / (2 * eps)
        got = analytic[k]
        if ss.issparse(value):
            assert ss.issparse(got) and got.format == value.format
            assert (got.indptr == value.indptr).all() and (got.indices == value.indices).all()
            got = got.data
        np.testing.assert_allclose(np.asarray(got).reshape(-1), numeric, rtol=1e-5, atol=1e-6,
                                   err_msg="gradient of input %d" % k)


def _weights(shape, seed=11):
    return kt.constant(np.random.default_rng(seed).standard_normal(shape))


GRADIENT_CASES = [
    ("structured_dot", lambda x, b: kt.sum(sp.structured_dot(x, b) * _weights((4, 3))),
     [(4, 5), "dense:5,3"]),
    ("dot_sparse_dense", lambda x, b: kt.sum(sp.dot(x, b) * _weights((4, 3))),
     [(4, 5), "dense:5,3"]),
    ("dot_dense_sparse", lambda a, x: kt.sum(sp.dot(a, x) * _weights((2, 5))),
     ["dense:2,4", (4, 5)]),
    ("mul_sparse_dense", lambda x, b: sp.sp_sum(x * (b * b)), [(4, 5), "dense:4,5"]),
    ("mul_sparse_sparse", lambda x, y: kt.sum(sp.dense_from_sparse(x * y) * _weights((4, 5))),
     [(4, 5), "sparse:4,5"]),
    ("add_sparse_sparse", lambda x, y: kt.sum((x + y).toarray() ** 2), [(4, 5), "sparse:4,5"]),
    ("add_sparse_dense", lambda x, b: kt.sum((x + b) ** 2), [(4, 5), "dense:4,5"]),
    ("sp_sum_all", lambda x: sp.sp_sum(x * x), [(4, 5)]),
    ("sp_sum_0", lambda x: kt.sum(sp.sp_sum(x, 0) ** 2), [(4, 5)]),
    ("sp_sum_1", lambda x: kt.sum(sp.sp_sum(x, 1) ** 2), [(4, 5)]),
    ("row_scale", lambda x, s: kt.sum(sp.row_scale(x, s).toarray() * _weights((4, 5))),
     [(4, 5), (4,)]),
    ("col_scale", lambda x, s: kt.sum(sp.col_scale(x, s).toarray() * _weights((4, 5))),
     [(4, 5), (5,)]),
    ("sampling_dot", lambda a, b, p: kt.sum(sp.sampling_dot(a, b, p).toarray()
                                             * _weights((4, 5))),
     ["dense:4,3", "dense:5,3", (4, 5)]),
    ("dense_from_sparse", lambda x: kt.sum(x.toarray() * _weights((4, 5))), [(4, 5)]),
    ("csr_from_dense", lambda d: kt.sum(sp.csr_from_dense(d * d).toarray() * _weights((4, 5))),
     ["full:4,5"]),
    ("csc_from_dense", lambda d: sp.sp_sum(sp.csc_from_dense(d) * sp.csc_from_dense(d)),
     ["full:4,5"]),
    ("sparse_times_sparse", lambda x, y: kt.sum(sp.structured_dot(x, y).toarray()
                                                * _weights((4, 3))),
     [(4, 5), "sparse:5,3"]),
    ("transpose_and_structured", lambda x: kt.sum(sp.structured_exp(x.T).toarray()
                                                  * _weights((5, 4))),
     [(4, 5)]),
]


def _gradient_value(spec, fmt, k):
    """A float64 argument of a gradient case: a tuple is a sparse matrix of that shape (also
    "sparse:r,c"), "dense:r,c" or a 1-tuple a dense array, "full:r,c" a dense one with no
    zero."""
    rng = np.random.default_rng(20 + k)
    if isinstance(spec, tuple) and len(spec) == 2:
        return random_matrix(spec, fmt, "float64", 30 + k)
    if isinstance(spec, tuple):
        return rng.standard_normal(spec)
    kind, shape = spec.split(":")
    shape = tuple(int(s) for s in shape.split(","))
    if kind == "sparse":
        return random_matrix(shape, "csc" if fmt == "csr" else "csr", "float64", 40 + k,
                             density=0.7)
    values = rng.standard_normal(shape)
    return values + np.sign(values) * 0.5 if kind == "full" else values


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name,cost,specs", GRADIENT_CASES, ids=[c[0] for c in GRADIENT_CASES])
def test_gradients_match_finite_differences(server, fmt, name, cost, specs):
    check_gradients(cost, [_gradient_value(s, fmt, k) for k, s in enumerate(specs)])


def test_gradient_is_structured_and_sparse_cost_is_refused():
    x, b = sp.csr_matrix("x"), kt.dmatrix("b")
    g = kiln.grad(kt.sum(sp.structured_dot(x, b)), x)
    assert isinstance(g, sp.SparseVariable) and g.format == "csr" and g.dtype == "float64"
    assert g.parts.indices is x.parts.indices and g.parts.indptr is x.parts.indptr
    gx, gb = kiln.grad(kt.sum(sp.dot(x, b)), [x, b])
    assert isinstance(gx, sp.SparseVariable) and gb.type == kt.dmatrix
    with pytest.raises(TypeError, match="^Cost must be a scalar.$"):
        kiln.grad(x, x)


# --- shared variables, updates, pickling ------------------------------------------------------

@pytest.mark.parametrize("fmt", FORMATS)
def test_shared_sparse_variable_is_updated_over_calls(server, fmt):
    m = random_matrix(SHAPE, fmt, "float64", 5)
    W = kiln.shared(m, name="W")
    assert isinstance(W, sp.SparseTensorSharedVariable) and W.format == fmt
    assert W.type == sp.SparseTensorType(fmt, "float64")
    assert isinstance(W.parts.data, kiln.SharedVariable) and W.parts.data.name == "W.data"
    b = kt.dmatrix("b")
    f = kiln.function([b], sp.structured_dot(W, b), updates=[(W, W * 2)])
    B = dense((5, 2), "float64", 3)
    for k in range(3):
        np.testing.assert_allclose(f(B), (m * 2 ** k) @ B)
    got = W.get_value()
    assert got.format == fmt and np.allclose(got.toarray(), m.toarray() * 8)
    # An update may change the structure: W + X, a union.
    X = sparse_input(fmt, "float64", "X")
    g = kiln.function([X], [], updates={W: W + X})
    n = random_matrix(SHAPE, fmt, "float64", 6)
    g(n)
    assert np.allclose(W.get_value().toarray(), m.toarray() * 8 + n.toarray())
    W.set_value(ss.csr_matrix(np.eye(4, 5)))  # any format, converted
    assert W.get_value().format == fmt and np.allclose(W.get_value().toarray(), np.eye(4, 5))
    assert sp.shared is not None and isinstance(sp.shared(m), sp.SparseTensorSharedVariable)


def test_shared_sparse_variable_in_a_local_function(server):
    m = random_matrix(SHAPE, "csr", "float64", 8)
    W = kiln.shared(m, name="Wl")
    f = kiln.function([], sp.sp_sum(W), updates=[(W, sp.structured_exp(W) - W)],
                      mode=kiln.Mode(execute="local"))
    assert np.isclose(f(), m.sum())
    want = m.copy()
    want.data = np.exp(m.data) - m.data
    assert np.allclose(W.get_value().toarray(), want.toarray())


def test_update_of_another_type_is_refused(server):
    W = kiln.shared(ss.csr_matrix(np.eye(3)), name="Wt")
    with pytest.raises(TypeError, match="An update must have the same type"):
        kiln.function([], [], updates=[(W, W.T)])
    with pytest.raises(TypeError, match="An update must have the same type"):
        kiln.function([], [], updates=[(W, W.toarray())])


def test_pickled_function_with_sparse_inputs_and_outputs(server):
    x, y = sp.csr_matrix("x"), sp.csc_matrix("y")
    W = kiln.shared(ss.csr_matrix(np.arange(6.0).reshape(2, 3)), name="Wp")
    f = kiln.function([x, y], [x + y, sp.sp_sum(x * W)], updates=[(W, W * 3)])
    m = random_matrix((2, 3), "csr", "float64", 1)
    n = random_matrix((2, 3), "csc", "float64", 2)
    total, _ = f(m, n)
    g = pickle.loads(pickle.dumps(f))
    again, weighted = g(m, n)
    assert again.format == "csr" and np.allclose(again.toarray(), total.toarray())
    assert np.isclose(weighted, m.multiply(np.arange(6.0).reshape(2, 3) * 3).sum())
    V = kiln.shared(ss.csr_matrix(np.ones((2, 3))), name="Vp")
    swapped = f.copy(swap={W: V}, delete_updates=True)
    assert np.isclose(swapped(m, n)[1], m.sum()) and np.allclose(V.get_value().toarray(), 1)
    expr = pickle.loads(pickle.dumps(x * 2 + y))
    assert isinstance(expr, sp.SparseVariable) and str(expr.type) == str((x * 2 + y).type)


def test_function_options_with_sparse_values(server):
    x = sp.csr_matrix("x")
    m = random_matrix(SHAPE, "csr", "float64", 4)
    f = kiln.function([kiln.In(x, name="x", value=m)], {"double": x * 2, "sum": sp.sp_sum(x)})
    out = f()
    assert sorted(out) == ["double", "sum"] and np.isclose(out["sum"], m.sum())
    assert np.allclose(f(x=m * 0)["double"].toarray(), 0)
    y = sp.csr_matrix("y")
    g = kiln.function([y], sp.sp_sum(x), givens={x: y * 3})
    assert np.isclose(g(m), 3 * m.sum())
    assert np.allclose((x * 2).eval({x: m}).toarray(), 2 * m.toarray())
    out = f(m, output_subset=[1])
    assert out == {"sum": pytest.approx(m.sum())}
    with pytest.raises(kiln.compile.UnusedInputError, match="index 1"):
        kiln.function([x, y], sp.sp_sum(x))
    h = kiln.function([x, y], sp.sp_sum(x), on_unused_input="ignore")
    assert np.isclose(h(m, m), m.sum())


def test_examples_of_aesaras_sparse_page(server):
    """The examples of Aesara 2.9.4's doc/reference/tensor/sparse/index.rst, with its output."""
    x = sp.csc_matrix(name="x", dtype="int64")
    data, indices, indptr, shape = sp.csm_properties(x)
    f = kiln.function([x], sp.CSR(data, indices, indptr, shape))
    a = ss.csc_matrix(np.asarray([[0, 1, 1], [0, 0, 0], [1, 0, 0]]))
    assert f(a).toarray().tolist() == [[0, 0, 1], [1, 0, 0], [1, 0, 0]]
    x = sp.csc_matrix(name="x", dtype="float32")
    f = kiln.function([x], sp.structured_add(x, 2))
    a = ss.csc_matrix(np.asarray([[0, 0, -1], [0, -2, 1], [3, 0, 0]], dtype="float32"))
    assert f(a).toarray().tolist() == [[0, 0, 1], [0, 0, 3], [5, 0, 0]]
    assert str(sp.csc_from_dense(sp.dense_from_sparse(x)).type) == str(x.type)


# --- values given to functions ----------------------------------------------------------------

def test_inputs_are_read_as_aesara_filters_them(server):
    x = sp.csr_matrix("x", dtype="float32")
    f = kiln.function([x], x * 1)
    duplicated = ss.coo_matrix((np.array([1.0, 2.0, 3.0], dtype="float32"),
                                (np.array([1, 0, 1]), np.array([2, 1, 2]))), shape=(2, 3))
    got = f(duplicated)  # any format, duplicates summed, indices sorted
    assert got.format == "csr" and got.dtype == np.float32 and got.has_canonical_format
    assert np.allclose(got.toarray(), duplicated.toarray())
    unsorted = ss.csr_matrix((np.array([1.0, 2.0], dtype="float32"), np.array([2, 0]),
                              np.array([0, 2, 2])), shape=(2, 3))
    assert np.allclose(f(unsorted).toarray(), unsorted.toarray())
    # As Aesara's SparseTensorType.filter: a dense array or an int matrix is converted ...
    assert np.allclose(f(np.eye(2, dtype="float32")).toarray(), np.eye(2))
    assert f(ss.csc_matrix(np.eye(2, dtype="int8"))).dtype == np.float32
    # ... but not a float64 matrix into a float32 input, unless allow_input_downcast.
    with pytest.raises(TypeError, match="Expected float32 dtype but got float64"):
        f(ss.csr_matrix(np.eye(2)))
    g = kiln.function([x], x * 1, allow_input_downcast=True)
    assert g(ss.csr_matrix(np.eye(2))).dtype == np.float32
    with pytest.raises(TypeError, match="Expected an array-like object, but found a Variable"):
        f(x)


def test_mismatched_shapes_are_a_value_error(server):
    x, b = sp.csr_matrix("x"), kt.dmatrix("b")
    f = kiln.function([x, b], sp.structured_dot(x, b))
    with pytest.raises(SparseValueError) as info:
        f(ss.csr_matrix(np.eye(3)), np.ones((4, 2)))
    assert isinstance(info.value, ValueError) and info.value.code == "INVALID_ARGUMENT"
    y, v = sp.csr_matrix("y"), kt.dvector("v")
    g = kiln.function([x, y], x + y)
    with pytest.raises(SparseValueError):
        g(ss.csr_matrix(np.eye(3)), ss.csr_matrix(np.eye(4)))
    eye = ss.csr_matrix(np.eye(3))
    for expr, other in [(x * b, np.ones((3, 4))), (x + b, np.ones((2, 3))),
                        (sp.row_scale(x, v), np.ones(4)), (sp.mul_s_v(x, v), np.ones(2))]:
        h = kiln.function([x, b if other.ndim == 2 else v], expr)
        with pytest.raises(SparseValueError):
            h(eye, other)


@pytest.mark.parametrize("indices,indptr", [
    ([0, 7], [0, 1, 2]),          # a column out of range
    ([0, 1], [0, 2, 1]),          # indptr decreasing
    ([0, 1], [0, 1, 5]),          # indptr past the data
])
def test_malformed_matrices_are_refused(server, indices, indptr):
    data, idx, ptr, shp = kt.dvector("data"), kt.lvector("idx"), kt.lvector("ptr"), \
        kt.lvector("shp")
    built = sp.CSR(data, idx, ptr, shp)
    f = kiln.function([data, idx, ptr, shp], [built.toarray()])
    g = kiln.function([data, idx, ptr, shp], sp.structured_dot(built, kt.constant(np.ones((3, 1)))))
    args = (np.array([1.0, 2.0]), np.array(indices), np.array(indptr), np.array([2, 3]))
    for fn in (f, g):
        with pytest.raises(kiln.KilnError) as info:
            fn(*args)
        assert info.value.code == "INVALID_ARGUMENT"


# --- Aesara's types, dtypes and errors ----------------------------------------------------------

def test_types_print_as_aesaras():
    x = sp.csr_matrix("x")
    assert str(x) == "SparseVariable{csr,float64}" and x.name == "x"
    assert str(x.type) == "SparseTensorType{dtype='float64', format='csr', shape=(None, None)}"
    assert repr(x.type) == "Sparse(float64, (None, None), csr)"
    assert sp.csc_matrix(dtype="float32").type == sp.csc_fmatrix
    assert sp.csr_dmatrix == sp.SparseTensorType("csr", "float64")
    assert hash(sp.csr_dmatrix) == hash(sp.SparseTensorType("csr", "float64"))
    c = sp.constant(ss.csr_matrix(np.eye(3)))
    assert str(c) == "SparseConstant{csr,float64,shape=(3, 3),nnz=3}"
    assert str(c.type) == "SparseTensorType{dtype='float64', format='csr', shape=(3, 3)}"
    assert [str(t.type) for t in sp.csm_properties(x)] == [
        "TensorType(float64, (?,))", "TensorType(int64, (?,))", "TensorType(int64, (?,))",
        "TensorType(int64, (2,))"]
    assert (x.ndim, x.dtype, x.format, x.shape.dtype) == (2, "float64", "csr", "int64")
    ops = {sp.CSR: "CSM{format='csr'}", sp.transpose: "SparseTranspose", sp.neg: "SparseNeg",
           sp.dense_from_sparse: "DenseFromSparse{structured_grad=True}",
           sp.csr_from_dense: "SparseFromDense{csr}", sp.fcast: "Cast(float32)",
           sp.SpSum(0): "SpSum{axis=0}", sp.remove0: "Remove0{}",
           sp.ensure_sorted_indices: "EnsureSortedIndices{no_inplace}",
           sp.HStack("csc", "float64"): "HStack(csc,float64)", sp.usmm: "Usmm{no_inplace}",
           sp.basic.csm_properties: "CSMProperties", sp.add_s_s: "AddSS",
           sp.less_than_s_d: "LessThanSD", sp.Dot(): "SparseDot"}
    for op, text in ops.items():
        assert str(op) == text
    assert sp.sqrt.__name__ == "sqrt" and sp.rint.__name__ == "rint"


def test_result_types_follow_aesara():
    """The result types Aesara 2.9.4 gives (taken from it)."""
    x, xf, y = sp.csr_matrix("x"), sp.csr_matrix("xf", dtype="float32"), sp.csc_matrix("y")
    d, fd, v = kt.dmatrix("d"), kt.fmatrix("fd"), kt.dvector("v")
    sparse = "SparseTensorType{dtype='%s', format='%s', shape=(None, None)}"
    cases = [
        (xf * 2, sparse % ("float32", "csr")), (xf * 2.5, sparse % ("float32", "csr")),
        (xf * 1e100, sparse % ("float64", "csr")), (x * xf, sparse % ("float64", "csr")),
        (xf * x, sparse % ("float64", "csr")), (xf * d, sparse % ("float64", "csr")),
        (d * xf, sparse % ("float64", "csr")), (x * y, sparse % ("float64", "csr")),
        (x + y, sparse % ("float64", "csr")), (x + fd, "TensorType(float64, (?, ?))"),
        (xf + d, "TensorType(float64, (?, ?))"), (d - x, "TensorType(float64, (?, ?))"),
        (-x, sparse % ("float64", "csr")), (y.T, sparse % ("float64", "csr")),
        (sp.structured_dot(xf, d), "TensorType(float64, (?, ?))"),
        (sp.structured_dot(d, x), "TensorType(float64, (?, ?))"),
        (sp.structured_dot(x, y), sparse % ("float64", "csr")),
        (sp.dot(x, v), "TensorType(float64, (?,))"), (sp.dot(v, x), "TensorType(float64, (?,))"),
        (sp.dot(x, x), "TensorType(float64, (?, ?))"),
        (sp.true_dot(x, d), sparse % ("float64", "csr")),
        (sp.true_dot(d, x), sparse % ("float64", "csr")),
        (sp.true_dot(y, x), sparse % ("float64", "csc")),
        (sp.row_scale(xf, v), sparse % ("float32", "csr")),
        (sp.col_scale(y, kt.fvector()), sparse % ("float64", "csc")),
        (sp.sampling_dot(fd, fd, x), sparse % ("float64", "csr")),
        (sp.sampling_dot(d, d, xf), sparse % ("float32", "csr")),
        (sp.sp_sum(xf), "TensorType(float32, ())"), (sp.sp_sum(x, 1), "TensorType(float64, (?,))"),
        (sp.cast(x, "int32"), sparse % ("int32", "csr")), (x.astype("float32"),
                                                           sparse % ("float32", "csr")),
        (sp.hstack([x, y]), sparse % ("float64", "csc")),
        (sp.vstack([x, xf]), sparse % ("float64", "csc")),
        (sp.square_diagonal(kt.fvector()), sparse % ("float32", "csc")),
        (sp.diag(x), "TensorType(float64, (?,))"), (xf.toarray(), "TensorType(float32, (?, ?))"),
        (x < d, "TensorType(uint8, (?, ?))"),
        (sp.sqrt(sp.csr_matrix(dtype="int32")), sparse % ("float64", "csr")),
        (sp.structured_pow(xf, 2), sparse % ("float32", "csr")),
        (sp.structured_maximum(x, 2), sparse % ("float64", "csr")),
        (sp.csr_from_dense(fd), sparse % ("float32", "csr")),
        (sp.csc_from_dense(v), sparse % ("float64", "csc")),
        (sp.conj(sp.csr_matrix(dtype="complex128")), sparse % ("complex128", "csr")),
    ]
    for expr, text in cases:
        assert str(expr.type) == text, (expr, text)
    assert sp.conj(x) is x and sp.dense_from_sparse(d) is d and sp.csr_from_dense(x) is x


def test_wrong_arguments_raise_aesaras_errors():
    x, d, v = sp.csr_matrix("x"), kt.dmatrix("d"), kt.dvector("v")
    with pytest.raises(TypeError, match="structured_dot requires at least one sparse argument"):
        sp.structured_dot(d, d)
    with pytest.raises(NotImplementedError, match="non-matrix b"):
        sp.structured_dot(x, v)
    with pytest.raises(TypeError, match="Sparse dot product should have at least one sparse"):
        sp.Dot()(d, d)
    with pytest.raises(ValueError, match="Illegal value for self.axis."):
        sp.sp_sum(x, 2)
    with pytest.raises(NotImplementedError, match="MulSV not implemented for differing dtypes"):
        sp.mul_s_v(x, kt.fvector())
    with pytest.raises(NotImplementedError):
        sp.structured_add_s_v(x, kt.fvector())
    with pytest.raises(NotImplementedError):
        sp.true_dot(sp.csr_matrix(dtype="float32"), d)
    with pytest.raises(NotImplementedError):
        sp.eq(x, sp.csc_matrix())
    with pytest.raises(AssertionError):
        x + 2
    with pytest.raises(AssertionError):
        x * v
    with pytest.raises(TypeError, match="Variable type field must be a SparseTensorType"):
        sp.as_sparse_variable(d)
    with pytest.raises(TypeError, match="Cannot convert"):
        sp.as_sparse_variable(np.eye(2))
    with pytest.raises(TypeError, match="sparse.constant must be called on a scipy.sparse"):
        sp.constant(np.eye(2))
    with pytest.raises(TypeError, match="data argument must be a vector"):
        sp.CSR(d, kt.lvector(), kt.lvector(), kt.lvector())
    with pytest.raises(TypeError, match="indices must be vector of integers"):
        sp.CSR(v, v, kt.lvector(), kt.lvector())
    with pytest.raises(ValueError, match='unsupported format "coo" not in list'):
        sp.matrix("coo")
    with pytest.raises(TypeError, match="Unsupported dtype for SparseTensorType: bool"):
        sp.SparseTensorType("csr", "bool")
    for make in (sp.bsr_matrix, sp.bsr_dmatrix, sp.bsr_fmatrix,
                 lambda: sp.SparseTensorType("bsr", "float64")):
        with pytest.raises(NotImplementedError, match="BSR format is not supported.*CSR and CSC"):
            make()
    with pytest.raises(TypeError, match="is sparse, not a tensor"):
        kt.as_tensor_variable(x)
    with pytest.raises(TypeError, match="is sparse, not a tensor"):
        kt.exp(x)
    with pytest.raises(NotImplementedError, match="no sparse vector"):
        x[1:2, 0]


def test_dense_methods_warn_as_aesara():
    x = sp.csr_matrix("x")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        e = x.exp()
    assert str(e.type) == "TensorType(float64, (?, ?))"
    assert "Method exp is not implemented for sparse variables" in str(caught[0].message)
    assert sp.sqrt(x).type == x.type and (x == x) is True


# --- printing ----------------------------------------------------------------------------------

def test_printing_shows_the_components():
    x = sp.csr_matrix("x")
    assert kiln.pp(x) == "CSM{format='csr'}(x.data, x.indices, x.indptr, x.shape)"
    assert kiln.pp(x * 2) == "CSM{format='csr'}((x.data * 2), x.indices, x.indptr, x.shape)"
    text = kiln.dprint(-x, file="str")
    assert text.splitlines()[0].startswith("Elemwise{neg,no_inplace}")
    assert "x.indices" in text and "x.indptr" in text and "x.shape" in text


def test_kiln_exposes_the_module():
    assert kiln.sparse is sp and isinstance(kiln.shared(ss.eye(2, format="csc")),
                                            sp.SparseVariable)
