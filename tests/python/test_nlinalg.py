"""kiln.tensor.nlinalg against numpy.linalg: Aesara's names, types and module, values of every op
and graph function (norm over its orders and axes), gradients by finite differences
(verify_grad) and the errors of bad inputs, through the server."""
import numpy as np
import pytest

import kiln
import kiln.tensor as kt
from kiln.gradient import verify_grad
from kiln.tensor import linalg, nlinalg

rng = np.random.default_rng(537)


def _well(m, n=None, dtype="float64"):
    n = m if n is None else n
    a = rng.standard_normal((m, n)) + 3 * np.eye(m, n)
    return a.astype(dtype)


def _sym(n):
    a = rng.standard_normal((n, n))
    return (a + a.T) / 2 + np.diag(np.arange(n) * 1.5)


def test_names_types_and_module_are_aesaras():
    x = kt.dmatrix("x")
    assert str(nlinalg.matrix_inverse) == "MatrixInverse"
    assert nlinalg.inv(x).owner.op == kiln.ops.MatrixInverse()
    assert str(nlinalg.pinv(x, hermitian=True).owner.op) == "MatrixPinv{hermitian=True}"
    assert str(nlinalg.det) == "Det" and str(nlinalg.eig) == "Eig"
    assert str(nlinalg.eigh(x)[0].owner.op) == "Eigh{UPLO='L'}"
    assert str(nlinalg.qr(x, "r").owner.op) == "QRFull{mode='r'}"
    assert str(nlinalg.svd(x, 0, 0).owner.op) == "SVD{full_matrices=False, compute_uv=False}"
    assert str(nlinalg.lstsq) == "Lstsq"
    assert str(nlinalg.tensorinv(kt.dtensor3()).owner.op) == "TensorInv{ind=2}"
    assert str(nlinalg.tensorsolve(kt.dtensor3(), kt.dvector(), (0,)).owner.op) == (
        "TensorSolve{axes=(0,)}")
    assert str(nlinalg.slogdet(x)[0].owner.op) == "SLogDet"
    assert nlinalg.det(kt.fmatrix()).type.dtype == "float32"
    assert nlinalg.det(x).ndim == 0
    assert [v.type.dtype for v in nlinalg.eigh(kt.lmatrix())] == ["float64", "float64"]
    assert [v.type.dtype for v in nlinalg.qr(kt.fmatrix())] == ["float32", "float32"]
    assert [v.ndim for v in nlinalg.qr(x, "raw")] == [2, 1]
    assert [v.type.dtype for v in nlinalg.lstsq(kt.fmatrix(), kt.fvector(), -1.0)] == [
        "float64", "float64", "int64", "float64"]
    for name in nlinalg.__all__:
        assert hasattr(nlinalg, name) and hasattr(linalg, name)
    assert kt.linalg.cholesky is kt.slinalg.cholesky


def test_values_match_numpy(server):
    a, b, bm = kt.dmatrix("a"), kt.dvector("b"), kt.dmatrix("bm")
    av, wide, tall = _well(4), rng.standard_normal((3, 5)), rng.standard_normal((5, 3))
    sv = _sym(4)
    outs = [nlinalg.inv(a), nlinalg.det(a), *nlinalg.slogdet(a), nlinalg.pinv(a),
            nlinalg.trace(a), nlinalg.matrix_power(a, 5), nlinalg.matrix_power(a, -2),
            nlinalg.matrix_power(a, 0), nlinalg.matrix_dot(a, a, a)]
    got = kiln.function([a], outs)(av)
    want = [np.linalg.inv(av), np.linalg.det(av), *np.linalg.slogdet(av), np.linalg.pinv(av),
            np.trace(av), np.linalg.matrix_power(av, 5),
            np.linalg.matrix_power(np.linalg.pinv(av), 2), np.eye(4), av @ av @ av]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
    w, v = kiln.function([a], nlinalg.eigh(a, "U"))(sv)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(sv, "U"), rtol=1e-12)
    np.testing.assert_allclose(sv @ v, v * w, atol=1e-10)
    w, v = kiln.function([a], nlinalg.eig(a))(sv)
    np.testing.assert_allclose(np.sort(w), np.linalg.eigvalsh(sv), rtol=1e-10)
    for m in (wide, tall):
        for mode in ("reduced", "complete", "r", "raw"):
            got = kiln.function([a], nlinalg.qr(a, mode))(m)
            want = np.linalg.qr(m, mode)
            for g, w in zip(got if isinstance(got, list) else [got],
                            want if isinstance(want, tuple) else [want]):
                np.testing.assert_allclose(g, w, atol=1e-12)
        for full in (True, False):
            u, s, vt = kiln.function([a], nlinalg.svd(a, full))(m)
            nu, ns, nvt = np.linalg.svd(m, full)
            np.testing.assert_allclose(s, ns, rtol=1e-12)
            assert u.shape == nu.shape and vt.shape == nvt.shape
            k = min(m.shape)
            np.testing.assert_allclose((u[:, :k] * s) @ vt[:k], m, atol=1e-12)
        np.testing.assert_allclose(kiln.function([a], nlinalg.pinv(a))(m), np.linalg.pinv(m),
                                   atol=1e-12)
    bv, bmv = rng.standard_normal(5), rng.standard_normal((5, 2))
    got = kiln.function([a, b, bm], nlinalg.lstsq(a, b, -1.0) + nlinalg.lstsq(a, bm, -1.0))(
        tall, bv, bmv)
    want = list(np.linalg.lstsq(tall, bv, -1)) + list(np.linalg.lstsq(tall, bmv, -1))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10)
    t3, t4 = kt.dtensor3("t3"), kt.dtensor4("t4")
    tv = rng.standard_normal((2, 3, 6)) + 3 * np.eye(6).reshape(2, 3, 6)
    t4v = rng.standard_normal((3, 2, 3, 2)) + 3 * np.eye(6).reshape(3, 2, 3, 2)
    yv = rng.standard_normal((2, 3))
    got = kiln.function([t3, t4, bm], [nlinalg.tensorinv(t3), nlinalg.tensorsolve(t3, bm),
                                       nlinalg.tensorsolve(t4, bm, (0,))])(tv, t4v, yv)
    want = [np.linalg.tensorinv(tv), np.linalg.tensorsolve(tv, yv),
            np.linalg.tensorsolve(t4v, yv, (0,))]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10)


@pytest.mark.parametrize("ord", [None, "fro", "inf", "-inf", np.inf, -np.inf, 1, -1, 2, -2, "nuc"])
def test_matrix_norms(server, ord):
    a = kt.dmatrix("a")
    av = rng.standard_normal((3, 4))
    np_ord = {"inf": np.inf, "-inf": -np.inf}.get(ord, ord)
    np.testing.assert_allclose(kiln.function([a], nlinalg.norm(a, ord))(av),
                               np.linalg.norm(av, np_ord), rtol=1e-12)
    np.testing.assert_allclose(kiln.function([a], nlinalg.norm(a, ord, axis=(1, 0)))(av),
                               np.linalg.norm(av, np_ord, axis=(1, 0)), rtol=1e-12)


@pytest.mark.parametrize("ord", [None, "inf", "-inf", 0, 1, 2, 3, 0.5])
def test_vector_norms(server, ord):
    v, m, t = kt.dvector("v"), kt.dmatrix("m"), kt.dtensor3("t")
    vv, mv, tv = rng.standard_normal(5), rng.standard_normal((3, 4)), rng.standard_normal((2, 3, 4))
    vv[1] = 0
    np_ord = {"inf": np.inf, "-inf": -np.inf}.get(ord, ord)
    got = kiln.function([v, m, t], [nlinalg.norm(v, ord), nlinalg.norm(m, ord, axis=1),
                                    nlinalg.norm(t, ord, axis=-2, keepdims=True)])(vv, mv, tv)
    want = [np.linalg.norm(vv, np_ord), np.linalg.norm(mv, np_ord, axis=1),
            np.linalg.norm(tv, np_ord, axis=-2, keepdims=True)]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12)


def test_float32_and_complex(server):
    f, z = kt.fmatrix("f"), kt.zmatrix("z")
    fv = _well(3, dtype="float32")
    zv = (rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3)) + 3 * np.eye(3))
    got = kiln.function([f, z], [nlinalg.inv(f), nlinalg.det(f), nlinalg.inv(z), nlinalg.det(z),
                                 nlinalg.pinv(z)])(fv, zv)
    assert got[0].dtype == np.float32 and got[1].dtype == np.float32
    np.testing.assert_allclose(got[0], np.linalg.inv(fv), rtol=1e-5)
    np.testing.assert_allclose(got[1], np.linalg.det(fv), rtol=1e-5)
    np.testing.assert_allclose(got[2], np.linalg.inv(zv), rtol=1e-12)
    np.testing.assert_allclose(got[3], np.linalg.det(zv), rtol=1e-12)
    np.testing.assert_allclose(got[4], np.linalg.pinv(zv), atol=1e-12)


def test_gradients_match_finite_differences(server):
    av, sv, tall = _well(3), _sym(3), rng.standard_normal((4, 3)) + np.eye(4, 3)
    bv = rng.standard_normal(4)
    verify_grad(lambda m: nlinalg.inv(m), [av], rng=np.random.default_rng(1))
    verify_grad(lambda m: nlinalg.det(m), [av], rng=np.random.default_rng(2))
    verify_grad(lambda m: nlinalg.slogdet(m)[1], [av], rng=np.random.default_rng(3))
    verify_grad(lambda m: nlinalg.pinv(m), [tall], rng=np.random.default_rng(4))
    verify_grad(lambda m: nlinalg.eigh(m)[0], [sv], rng=np.random.default_rng(5))
    verify_grad(lambda m: nlinalg.svd(m, compute_uv=False), [tall], rng=np.random.default_rng(6))
    verify_grad(lambda m: nlinalg.qr(m)[1], [tall], rng=np.random.default_rng(7))
    verify_grad(lambda m, b: nlinalg.lstsq(m, b, -1.0)[0], [tall, bv],
                rng=np.random.default_rng(8))
    verify_grad(lambda m: nlinalg.norm(m, "nuc"), [tall], rng=np.random.default_rng(9))
    verify_grad(lambda m: nlinalg.matrix_power(m, 3), [av], rng=np.random.default_rng(10))


def test_errors(server):
    a = kt.dmatrix("a")
    f = kiln.function([a], nlinalg.inv(a))
    with pytest.raises(Exception, match="MatrixInverse: Singular matrix"):
        f(np.array([[1.0, 2.0], [2.0, 4.0]]))
    with pytest.raises(Exception, match="Last 2 dimensions of the array must be square"):
        kiln.function([a], nlinalg.det(a))(np.ones((2, 3)))
    with pytest.raises(Exception, match="but a matrix is needed"):
        nlinalg.det(kt.dvector())
    with pytest.raises(Exception, match="Unrecognized mode 'foo'"):
        nlinalg.qr(a, "foo")
    with pytest.raises(ValueError, match="Invalid norm order 'nuc' for vectors"):
        nlinalg.norm(kt.dvector(), "nuc")
    with pytest.raises(ValueError, match="Invalid norm order 'fro' for vectors"):
        nlinalg.norm(kt.dvector(), "fro")
    with pytest.raises(ValueError, match="Invalid norm order for matrices"):
        nlinalg.norm(a, 3)
    with pytest.raises(ValueError, match="out of bounds"):
        nlinalg.norm(kt.dscalar())


def test_ill_conditioned_matrices_agree_with_numpy(server):
    # The 7 x 7 Hilbert matrix (condition number about 5e8) and a rank-deficient 6 x 4 matrix.
    h = 1.0 / (np.arange(7)[:, None] + np.arange(7)[None, :] + 1)
    r = rng.standard_normal((6, 2)) @ rng.standard_normal((2, 4))
    a, b = kt.dmatrix("a"), kt.dvector("b")
    got = kiln.function([a], [nlinalg.inv(a), nlinalg.det(a), nlinalg.slogdet(a)[1],
                              nlinalg.svd(a, compute_uv=False), nlinalg.pinv(a, hermitian=True)])(h)
    want = [np.linalg.inv(h), np.linalg.det(h), np.linalg.slogdet(h)[1],
            np.linalg.svd(h, compute_uv=False), np.linalg.pinv(h, hermitian=True)]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-14)
    bv = rng.standard_normal(6)
    x, res, rank, s = kiln.function([a, b], nlinalg.lstsq(a, b, 1e-10))(r, bv)
    nx, nres, nrank, ns = np.linalg.lstsq(r, bv, rcond=1e-10)
    assert rank == nrank == 2 and res.shape == nres.shape == (0,)
    np.testing.assert_allclose(x, nx, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(kiln.function([a], nlinalg.pinv(a))(r), np.linalg.pinv(r),
                               rtol=1e-8, atol=1e-12)
    assert kiln.function([a], nlinalg.det(a))(np.array([[1.0, 2.0], [2.0, 4.0]])) == 0.0
    sign, logdet = kiln.function([a], list(nlinalg.slogdet(a)))(np.array([[1.0, 2.0], [2.0, 4.0]]))
    assert sign == 0.0 and logdet == -np.inf
