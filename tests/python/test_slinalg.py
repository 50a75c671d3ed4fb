"""kiln.tensor.slinalg against scipy.linalg: Aesara's names, types and graphs, values of every
solver and matrix function, gradients by finite differences (verify_grad) and the errors of bad
inputs, through the server."""
import warnings

import numpy as np
import pytest
import scipy.linalg

import kiln
import kiln.tensor as kt
from kiln.gradient import verify_grad
from kiln.tensor import slinalg

rng = np.random.default_rng(37)


def _spd(n, dtype="float64"):
    m = rng.standard_normal((n, n))
    return (m @ m.T + n * np.eye(n)).astype(dtype)


def test_names_and_types_are_aesaras():
    x, b = kt.dmatrix("x"), kt.dvector("b")
    assert str(slinalg.cholesky) == "Cholesky{lower=True, destructive=False, on_error='raise'}"
    assert slinalg.cholesky == kiln.ops.Cholesky(lower=True, on_error="raise")
    assert str(slinalg.solve(x, b).owner.op) == (
        "Solve{assume_a='gen', lower=False, check_finite=True}")
    assert str(slinalg.solve_triangular(x, b, trans="T", lower=True).owner.op) == (
        "SolveTriangular{lower=True, trans=1, unit_diagonal=False, check_finite=True}")
    assert str(slinalg.cho_solve((x, False), b).owner.op) == (
        "CholeskySolve{lower=False, check_finite=True}")
    assert str(slinalg.eigvalsh(x, None).owner.op) == "Eigvalsh{lower=True}"
    assert str(slinalg.expm(x).owner.op) == "Expm"
    assert str(slinalg.solve_continuous_lyapunov(x, x).owner.op) == "SolveContinuousLyapunov"
    assert str(slinalg.solve_discrete_lyapunov(x, x, method="bilinear").owner.op) == (
        "BilinearSolveDiscreteLyapunov")
    assert slinalg.cholesky(kt.fmatrix()).type.dtype == "float32"
    assert slinalg.solve(kt.fmatrix(), kt.dvector()).type.dtype == "float64"
    assert slinalg.solve(kt.lmatrix(), kt.ivector()).type.dtype == "float64"
    assert slinalg.solve(x, kt.dmatrix()).type.ndim == 2
    assert slinalg.__all__ == ["cholesky", "solve", "eigvalsh", "kron", "expm"]
    with pytest.warns(DeprecationWarning, match="solve_lower_triangular"):
        assert slinalg.solve_lower_triangular == kiln.ops.SolveTriangular(lower=True)


def test_values_match_scipy(server):
    a, q = kt.dmatrix("a"), kt.dmatrix("q")
    b, bm = kt.dvector("b"), kt.dmatrix("bm")
    av = _spd(4)
    bv, bmv = rng.standard_normal(4), rng.standard_normal((4, 3))
    lv = np.tril(rng.standard_normal((4, 4))) + 4 * np.eye(4)
    gv = rng.standard_normal((4, 4))
    stable = gv - 4 * np.eye(4)
    outs = [slinalg.cholesky(a), slinalg.Cholesky(lower=False)(a),
            slinalg.solve(a, b), slinalg.solve(a, bm, assume_a="pos", lower=True),
            slinalg.solve(a, bm, assume_a="sym"), slinalg.solve_triangular(q, b, lower=True),
            slinalg.solve_triangular(q, bm, trans="T", lower=True, unit_diagonal=True),
            slinalg.cho_solve((slinalg.cholesky(a), True), bm), slinalg.eigvalsh(a, None),
            slinalg.eigvalsh(a, a + kt.eye(4)), slinalg.expm(q),
            slinalg.solve_continuous_lyapunov(q, a),
            slinalg.solve_discrete_lyapunov(q * 0.1, a),
            slinalg.solve_discrete_lyapunov(q * 0.1, a, method="bilinear")]
    f = kiln.function([a, q, b, bm], outs)
    got = f(av, lv, bv, bmv)
    f2 = kiln.function([a, q], outs[10:])
    got2 = f2(av, stable)
    want = [scipy.linalg.cholesky(av, lower=True), scipy.linalg.cholesky(av),
            scipy.linalg.solve(av, bv), scipy.linalg.solve(av, bmv, assume_a="pos", lower=True),
            scipy.linalg.solve(av, bmv, assume_a="sym"),
            scipy.linalg.solve_triangular(lv, bv, lower=True),
            scipy.linalg.solve_triangular(lv, bmv, trans="T", lower=True, unit_diagonal=True),
            scipy.linalg.cho_solve((scipy.linalg.cholesky(av, lower=True), True), bmv),
            scipy.linalg.eigvalsh(av), scipy.linalg.eigvalsh(av, av + np.eye(4))]
    want2 = [scipy.linalg.expm(stable), scipy.linalg.solve_continuous_lyapunov(stable, av),
             scipy.linalg.solve_discrete_lyapunov(stable * 0.1, av),
             scipy.linalg.solve_discrete_lyapunov(stable * 0.1, av, method="bilinear")]
    for g, w in zip(list(got[:10]) + list(got2), want + want2):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


def test_float32_and_complex(server):
    a = kt.fmatrix("a")
    av = _spd(3, "float32")
    out = kiln.function([a], [slinalg.cholesky(a), slinalg.expm(a)])(av)
    assert out[0].dtype == np.float32 and out[1].dtype == np.float32
    np.testing.assert_allclose(out[0], scipy.linalg.cholesky(av, lower=True), rtol=1e-5)
    np.testing.assert_allclose(out[1], scipy.linalg.expm(av.astype("float64")), rtol=1e-5)
    z, zb = kt.zmatrix("z"), kt.zvector("zb")
    m = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    h = m @ m.conj().T + 3 * np.eye(3)
    zv = rng.standard_normal(3) + 1j * rng.standard_normal(3)
    got = kiln.function([z, zb], [slinalg.cholesky(z), slinalg.solve(z, zb, assume_a="her")])(
        h, zv)
    np.testing.assert_allclose(got[0], scipy.linalg.cholesky(h, lower=True), rtol=1e-10)
    np.testing.assert_allclose(got[1], scipy.linalg.solve(h, zv, assume_a="her"), rtol=1e-10)


def test_gradients_match_finite_differences(server):
    sym = lambda m: (m + m.T) / 2  # noqa: E731
    av, bv = _spd(3), rng.standard_normal((3, 2))
    verify_grad(lambda m: slinalg.cholesky(sym(m)), [av], rng=np.random.default_rng(1))
    verify_grad(lambda m, b: slinalg.solve(m, b), [av, bv], rng=np.random.default_rng(2))
    verify_grad(lambda m, b: slinalg.solve(sym(m), b, assume_a="pos"), [av, bv],
                rng=np.random.default_rng(3))
    verify_grad(lambda m, b: slinalg.solve_triangular(m, b, lower=True), [av, bv],
                rng=np.random.default_rng(4))
    verify_grad(lambda m: slinalg.eigvalsh(sym(m), None), [av], rng=np.random.default_rng(5))
    verify_grad(lambda m: slinalg.expm(m), [0.3 * rng.standard_normal((3, 3))],
                rng=np.random.default_rng(6))
    verify_grad(lambda m, q: slinalg.solve_continuous_lyapunov(m, q),
                [rng.standard_normal((3, 3)) - 3 * np.eye(3), av], rng=np.random.default_rng(7))
    verify_grad(lambda m, q: slinalg.solve_discrete_lyapunov(m, q, method="bilinear"),
                [0.2 * rng.standard_normal((3, 3)), av], rng=np.random.default_rng(8))


def test_errors(server):
    a, b = kt.dmatrix("a"), kt.dvector("b")
    with pytest.raises(ValueError, match="banded is not a recognized matrix structure"):
        slinalg.solve(a, b, assume_a="banded")
    with pytest.raises(ValueError, match='Parameter "method" must be one of'):
        slinalg.solve_discrete_lyapunov(a, a, method="schur")
    with pytest.raises(Exception, match="`a` must be a matrix"):
        slinalg.solve(kt.dvector(), b)
    f = kiln.function([a], slinalg.cholesky(a))
    with pytest.raises(Exception, match="is not positive definite"):
        f(np.array([[1.0, 2.0], [2.0, 1.0]]))
    g = kiln.function([a], slinalg.Cholesky(on_error="nan")(a))
    assert np.isnan(g(np.array([[1.0, 2.0], [2.0, 1.0]]))).all()
    s = kiln.function([a, b], slinalg.solve(a, b))
    with pytest.raises(Exception, match="Matrix is singular"):
        s(np.ones((2, 2)), np.ones(2))
    with pytest.raises(Exception, match="expected a square matrix"):
        s(np.ones((2, 3)), np.ones(2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert "solve_symmetric" in dir(slinalg)


def test_pytensor_lu_family_and_block_diag(server):
    a, b = kt.dmatrix("a"), kt.dmatrix("b")
    av, bv = rng.standard_normal((4, 4)), rng.standard_normal((4, 2))
    assert str(slinalg.lu(a)[0].owner.op) == (
        "LU{permute_l=False, overwrite_a=False, check_finite=True, p_indices=False}")
    assert str(slinalg.block_diag(a, b).owner.op) == "BlockDiagonal{n_inputs=2}"
    factors = slinalg.lu_factor(a)
    outs = list(slinalg.lu(a)) + list(slinalg.lu(a, permute_l=True)) + list(factors) + [
        slinalg.lu_solve(factors, b), slinalg.lu_solve(factors, b, trans=True),
        slinalg.block_diag(a, b), slinalg.lu(a, p_indices=True)[0]]
    got = kiln.function([a, b], outs)(av, bv)
    p, l, u = scipy.linalg.lu(av)
    pl, u2 = scipy.linalg.lu(av, permute_l=True)
    lu_, piv = scipy.linalg.lu_factor(av)
    want = [p, l, u, pl, u2, lu_, piv, scipy.linalg.lu_solve((lu_, piv), bv),
            scipy.linalg.lu_solve((lu_, piv), bv, trans=1), scipy.linalg.block_diag(av, bv),
            np.argmax(p, axis=1)]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    assert got[6].dtype == np.int32 and got[10].dtype == np.int32
    verify_grad(lambda m, r: slinalg.lu_solve(slinalg.lu_factor(m), r), [av, bv],
                rng=np.random.default_rng(9))
    verify_grad(lambda m: slinalg.lu(m)[1] + slinalg.lu(m)[2], [av],
                rng=np.random.default_rng(10))
    verify_grad(lambda m, r: slinalg.block_diag(m, r), [av, bv], rng=np.random.default_rng(11))
    with pytest.raises(Exception, match="Only one of permute_l and p_indices can be True"):
        slinalg.lu(a, permute_l=True, p_indices=True)


def _aesara_kron(a, b):
    """Aesara 2.9.4's kron written in NumPy (its graph, step by step)."""
    o = np.outer(a, b).reshape(a.shape + b.shape)
    if o.ndim == 3:
        return o.transpose(1, 0, 2).ravel()
    shf = o.transpose([0, 2, 1] + list(range(3, o.ndim)))
    return shf.reshape((o.shape[0] * o.shape[2], o.shape[1] * o.shape[3]) + o.shape[4:])


@pytest.mark.parametrize("sa,sb,shape", [((2, 3), (4, 5), (8, 15)), ((2,), (3, 4), (24,)),
                                         ((2, 3), (4,), (24,)), ((2, 3, 2), (3, 2), (4, 9, 2)),
                                         ((2, 2), (3, 2, 2), (6, 4, 2))])
def test_kron_is_aesaras(server, sa, sb, shape):
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    x = kt.tensor("float64", (None,) * len(sa))
    y = kt.tensor("float64", (None,) * len(sb))
    got = kiln.function([x, y], slinalg.kron(x, y))(a, b)
    assert got.shape == shape  # the shapes Aesara 2.9.4 gives
    np.testing.assert_allclose(got, _aesara_kron(a, b), rtol=1e-14)
    if len(sa) == len(sb) == 2:
        np.testing.assert_allclose(got, scipy.linalg.kron(a, b), rtol=1e-14)
    with pytest.raises(TypeError, match="kron: inputs dimensions must sum to 3 or more. You "
                                        "passed 1 and 1."):
        slinalg.kron(kt.dvector(), kt.dvector())


def test_ill_conditioned_matrices_agree_with_scipy(server):
    """Hilbert matrices (condition numbers near 5e8 and 5e11): SciPy's answers within what the
    conditioning allows (cond * eps; Kiln factors a C-order matrix as its transpose, so the
    rounding differs from SciPy's), and small residuals."""
    a, b = kt.dmatrix("a"), kt.dvector("b")
    f = kiln.function([a, b], [slinalg.solve(a, b), slinalg.solve(a, b, assume_a="pos"),
                               slinalg.cholesky(a), slinalg.eigvalsh(a, None)])
    for n in (7, 9):
        h = scipy.linalg.hilbert(n)
        rhs = np.arange(1.0, n + 1)
        got = f(h, rhs)
        want = [scipy.linalg.solve(h, rhs), scipy.linalg.solve(h, rhs, assume_a="pos"),
                scipy.linalg.cholesky(h, lower=True), scipy.linalg.eigvalsh(h)]
        bound = np.linalg.cond(h) * 4e-16
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=bound, atol=1e-12 * np.abs(w).max())
        np.testing.assert_allclose(h @ got[0], rhs, rtol=1e-5)


def test_stacks_of_matrices_are_blockwise_as_in_pytensor():
    """On inputs with batch dims cholesky, solve (b a stack of matrices or of vectors) and expm
    build Blockwise nodes and give scipy's values item by item; on a matrix they stay Aesara's."""
    x, b, bv = kt.tensor3("x"), kt.tensor3("b"), kt.matrix("bv")
    chol = slinalg.cholesky(x)
    assert str(chol.owner.op) == ("Blockwise{Cholesky{lower=True, destructive=False, "
                                  "on_error='raise'}, (m,m)->(m,m)}")
    assert str(slinalg.cholesky(kt.matrix()).owner.op).startswith("Cholesky{")
    f = kiln.function([x, b, bv], [chol, slinalg.solve(x, b),
                                   slinalg.solve(x, bv, assume_a="pos"), slinalg.expm(x)])
    rng = np.random.default_rng(0)
    a = rng.normal(size=(50, 5, 5))
    a = a @ a.transpose(0, 2, 1) + 5 * np.eye(5)
    bm, bvec = rng.normal(size=(50, 5, 3)), rng.normal(size=(50, 5))
    c, s, sv, e = f(a, bm, bvec)
    np.testing.assert_allclose(c, np.linalg.cholesky(a), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(s, np.linalg.solve(a, bm), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(sv, np.linalg.solve(a, bvec[..., None])[..., 0], rtol=1e-10,
                               atol=1e-12)
    np.testing.assert_allclose(e, np.stack([scipy.linalg.expm(m) for m in a]), rtol=1e-12)
