"""kiln.tensor.blockwise, vectorize and vectorize_graph (PyTensor's API) against NumPy: printed
names as PyTensor's, numpy.linalg's ops on stacks of matrices (Blockwise from kiln.tensor.nlinalg),
gradients by finite differences, pickling, graphs batched by vectorize, and the errors."""
import pickle

import numpy as np
import pytest

import kiln
import kiln.tensor as kt
from kiln.gradient import verify_grad
from kiln.graph import vectorize_graph
from kiln.tensor import nlinalg
from kiln.tensor.blockwise import Blockwise

rng = np.random.default_rng(3700)


def _stack(*shape):
    return rng.standard_normal(shape) + 3 * np.eye(shape[-1])


def test_names_and_props_are_pytensors():
    assert str(Blockwise(nlinalg.MatrixInverse())) == "Blockwise{MatrixInverse, (m,m)->(m,m)}"
    assert str(Blockwise(nlinalg.Det())) == "Blockwise{Det, (m,m)->()}"
    assert str(Blockwise(nlinalg.SVD(False, True))) == \
        "Blockwise{SVD{full_matrices=False, compute_uv=True}, (m,n)->(m,k),(k),(k,n)}"
    b = Blockwise(nlinalg.Eigh("U"))
    assert b.signature == "(m,m)->(m),(m,m)"
    assert b.inner_op == nlinalg.Eigh("U")
    assert b.inputs_sig == [("m", "m")] and b.outputs_sig == [("m",), ("m", "m")]
    assert pickle.loads(pickle.dumps(b)) == b
    assert Blockwise(kiln.ops.Dot(), "(m,n),(n,k)->(m,k)") != b
    # On a matrix the op is itself (Aesara's); on a stack, PyTensor's Blockwise.
    assert str(nlinalg.det(kt.dmatrix()).owner.op) == "Det"
    assert str(nlinalg.det(kt.dtensor3()).owner.op) == "Blockwise{Det, (m,m)->()}"


def test_static_types_broadcast():
    a = kt.tensor(dtype="float64", shape=(5, None, 1, 3, 3))
    y = nlinalg.matrix_inverse(a)
    assert y.type.shape == (5, None, 1, 3, 3)
    bw = Blockwise(kiln.ops.Dot(), "(m,n),(n,k)->(m,k)")
    z = bw(kt.tensor(dtype="float64", shape=(1, 2, 3)), kt.tensor(dtype="float64",
                                                                 shape=(4, 3, 5)))
    assert z.type.shape == (4, 2, 5)


def test_linalg_on_stacks_matches_numpy(server):
    x = kt.dtensor3("x")
    v = _stack(4, 3, 3)
    sign, logdet = nlinalg.slogdet(x)
    w, vecs = nlinalg.eigh(x + x.dimshuffle(0, 2, 1))
    s = nlinalg.svd(x, compute_uv=False)
    f = kiln.function([x], [nlinalg.det(x), nlinalg.matrix_inverse(x), sign, logdet,
                            nlinalg.pinv(x), w, s])
    got = f(v)
    np.testing.assert_allclose(got[0], np.linalg.det(v), rtol=1e-12)
    np.testing.assert_allclose(got[1], np.linalg.inv(v), rtol=1e-10, atol=1e-12)
    ws, wl = np.linalg.slogdet(v)
    np.testing.assert_allclose(got[2], ws)
    np.testing.assert_allclose(got[3], wl, rtol=1e-12)
    np.testing.assert_allclose(got[4], np.linalg.pinv(v), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(got[5], np.linalg.eigvalsh(v + v.transpose(0, 2, 1)), rtol=1e-10)
    np.testing.assert_allclose(got[6], np.linalg.svd(v, compute_uv=False), rtol=1e-10)
    # norm's spectral orders on a stack (batched SVD).
    f2 = kiln.function([x], [nlinalg.norm(x, 2, axis=(1, 2)), nlinalg.norm(x, "nuc",
                                                                          axis=(1, 2))])
    n2, nuc = f2(v)
    np.testing.assert_allclose(n2, np.linalg.norm(v, 2, axis=(1, 2)), rtol=1e-10)
    np.testing.assert_allclose(nuc, np.linalg.norm(v, "nuc", axis=(1, 2)), rtol=1e-10)


def test_a_thousand_determinants(server):
    x = kt.dtensor3("x")
    v = _stack(1000, 8, 8)
    np.testing.assert_allclose(kiln.function([x], nlinalg.det(x))(v), np.linalg.det(v),
                               rtol=1e-10)


def test_broadcast_batch_dims(server):
    bw = Blockwise(kiln.ops.Dot(), "(m,n),(n,k)->(m,k)")
    a = kt.tensor(dtype="float64", shape=(None, 1, None, None))
    b = kt.dtensor3("b")
    av, bv = rng.standard_normal((2, 1, 2, 3)), rng.standard_normal((4, 3, 5))
    np.testing.assert_allclose(kiln.function([a, b], bw(a, b))(av, bv), av @ bv, rtol=1e-12)


def test_gradients(server):
    v = _stack(2, 3, 3)
    verify_grad(lambda x: nlinalg.det(x), [v], rng=np.random.default_rng(1))
    verify_grad(lambda x: nlinalg.matrix_inverse(x), [v], rng=np.random.default_rng(2))
    bw = Blockwise(kiln.ops.Dot(), "(m,n),(n,k)->(m,k)")
    verify_grad(lambda a, b: bw(a, b), [rng.standard_normal((2, 3)),
                                        rng.standard_normal((4, 3, 2))],
                rng=np.random.default_rng(3))


def test_vectorize(server):
    def softmax(x):
        return kt.exp(x) / kt.exp(x).sum()

    x = kt.dmatrix("x")
    y = kt.vectorize(softmax, signature="(a)->(a)")(x)
    v = np.array([[0.0, 1, 2], [2, 1, 0]])
    want = np.exp(v) / np.exp(v).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(kiln.function([x], y)(v), want, rtol=1e-12)
    first_last = kt.vectorize(lambda x: (x[0], x[-1]), signature="(a)->(),()")
    y1, y2 = first_last(x)
    r1, r2 = kiln.function([x], [y1, y2])(np.array([[-10.0, 0, 10], [-11, 0, 11]]))
    np.testing.assert_allclose(r1, [-10, -11])
    np.testing.assert_allclose(r2, [10, 11])
    # Without a signature every input is a scalar.
    s = kt.dvector("s")
    np.testing.assert_allclose(kiln.function([s], kt.vectorize(lambda a: a * 2 + 1)(s))(
        np.array([1.0, 2])), [3, 5])
    with pytest.raises(ValueError, match="Number of inputs does not match signature"):
        kt.vectorize(softmax, signature="(a),(b)->(a)")(x)
    with pytest.raises(ValueError, match="less dimensions than signature"):
        kt.vectorize(softmax, signature="(a,b,c)->(a)")(x)


def test_vectorize_graph(server):
    m = kt.dmatrix("m")
    core = kt.exp(nlinalg.det(m)) + (m.T * 2).sum() + nlinalg.trace(m)
    batch = kt.dtensor3("batch")
    out = vectorize_graph(core, replace={m: batch})
    assert out.ndim == 1
    v = _stack(3, 2, 2)
    f = kiln.function([m], core)
    np.testing.assert_allclose(kiln.function([batch], out)(v), [f(a) for a in v], rtol=1e-12)
    x = kt.dvector("x")
    new = kt.dmatrix("new")
    y1, y2 = vectorize_graph([x[0], x[-1]], replace={x: new})
    r = kiln.function([new], [y1, y2])(np.array([[-10.0, 0, 10], [-11, 0, 11]]))
    np.testing.assert_allclose(r[0], [-10, -11])
    np.testing.assert_allclose(r[1], [10, 11])
    with pytest.raises(ValueError, match="cannot replace"):
        vectorize_graph(core, replace={m: kt.dvector()})


def test_errors():
    with pytest.raises(ValueError, match="has no gufunc signature"):
        Blockwise(kiln.ops.Repeat(axis=0))
    with pytest.raises(Exception, match="not a valid gufunc signature"):
        Blockwise(kiln.ops.Dot(), "(m,n)(n,k)->(m,k)")
    bw = Blockwise(kiln.ops.Dot(), "(m,n),(n,k)->(m,k)")
    with pytest.raises(Exception, match="core dims \\(m,n\\) need a tensor of at least 2 dims"):
        bw(kt.dvector(), kt.dmatrix())


def test_scipy_linalg_ops_batch(server):
    # scipy.linalg's ops (kiln.ops) wrapped by Blockwise with PyTensor's signatures.
    x = kt.dtensor3("x")
    a = rng.standard_normal((1000, 8, 8))
    spd = a @ a.transpose(0, 2, 1) + 8 * np.eye(8)
    chol = Blockwise(kiln.ops.Cholesky())
    assert str(chol).startswith("Blockwise{Cholesky{") and chol.signature == "(m,m)->(m,m)"
    np.testing.assert_allclose(kiln.function([x], chol(x))(spd), np.linalg.cholesky(spd),
                               rtol=1e-10, atol=1e-12)
    b = kt.dmatrix("b")
    solve = Blockwise(kiln.ops.Solve(), "(m,m),(m)->(m)")
    bv = rng.standard_normal((1000, 8))
    np.testing.assert_allclose(kiln.function([x, b], solve(x, b))(spd, bv),
                               np.linalg.solve(spd, bv[..., None])[..., 0], rtol=1e-9)
