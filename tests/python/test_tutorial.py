"""Aesara's logistic-regression tutorial with `import kiln as aesara`: shared weights, grad,
updates, and a training loop whose cost falls; then an MLP training step checked against
NumPy."""
import numpy as np

import kiln as aesara
import kiln.tensor as at


def logistic_regression(w_scale, mode=None):
    """The tutorial's data (seed 2882) and model, as its text reads, with the initial weights
    scaled by w_scale and its functions compiled in `mode`: (X, Y, w0, w, b, train, predict),
    train giving [prediction, xent]."""
    rng = np.random.default_rng(2882)
    N, feats = 400, 784
    D = (rng.standard_normal((N, feats)), rng.integers(size=N, low=0, high=2))
    x = at.dmatrix("x")
    y = at.dvector("y")
    w0 = rng.standard_normal(feats) * w_scale
    w = aesara.shared(w0, name="w")
    b = aesara.shared(0., name="b")
    p_1 = 1 / (1 + at.exp(-at.dot(x, w) - b))
    prediction = p_1 > 0.5
    xent = -y * at.log(p_1) - (1-y) * at.log(1-p_1)
    cost = xent.mean() + 0.01 * (w ** 2).sum()
    gw, gb = at.grad(cost, [w, b])
    train = aesara.function(inputs=[x, y], outputs=[prediction, xent],
                            updates=((w, w - 0.1 * gw), (b, b - 0.1 * gb)), mode=mode)
    predict = aesara.function(inputs=[x], outputs=prediction, mode=mode)
    return D[0], D[1], w0, w, b, train, predict


def test_logistic_regression_tutorial(server):
    X, Y, _, w, b, train, predict = logistic_regression(0.01)
    costs = [float(train(X, Y)[1].mean()) for _ in range(50)]
    assert costs[-1] < costs[0] * 0.5
    assert all(later <= earlier + 1e-12 for earlier, later in zip(costs, costs[1:]))
    accuracy = np.mean(predict(X) == Y)
    assert accuracy > 0.9
    # The weights live on the server and moved.
    assert np.abs(w.get_value()).sum() > 0
    assert b.get_value().shape == ()


def _sigmoid(z):
    return 0.5 * (1 + np.tanh(z / 2))  # finite for every z, unlike 1 / (1 + exp(-z))


def test_logistic_regression_as_documented(server):
    # Aesara's documentation, line for line: unscaled weights drawn from a standard normal, so
    # dot(x, w) reaches +-85 and 1 / (1 + exp(-t)) rounds to exactly 1.0. Only the stabilize
    # phase (sigmoid recognition, log(1 - sigmoid) -> -softplus) keeps xent and the step finite.
    X, Y, w0, w, b, train, predict = logistic_regression(1.0)
    N = len(Y)
    pred, err = train(X, Y)
    assert np.isfinite(err).all()
    # Aesara 2.9.4 on this data: xent in [0, 84.4689], mean 10.224 on the first call.
    assert abs(err.mean() - 10.224) < 1e-3 and abs(err.max() - 84.4689) < 1e-3
    # Ten steps equal NumPy's hand-derived gradient steps.
    wn, bn = w0.copy(), 0.0
    for step in range(10):
        if step > 0:
            train(X, Y)
        s = _sigmoid(X @ wn + bn)
        wn, bn = wn - 0.1 * (X.T @ (s - Y) / N + 0.02 * wn), bn - 0.1 * np.mean(s - Y)
    np.testing.assert_allclose(w.get_value(), wn, rtol=0, atol=1e-8)
    assert abs(b.get_value() - bn) < 1e-8
    for _ in range(400):
        train(X, Y)
    assert np.mean(predict(X) == Y) > 0.9


def test_mlp_training_step_matches_numpy(server):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(64, 20))
    t = np.arange(64) % 5
    W1v = rng.normal(scale=0.1, size=(20, 16))
    W2v = rng.normal(scale=0.1, size=(16, 5))

    x = at.dmatrix("X")
    labels = at.lvector("t")
    W1 = aesara.shared(W1v, name="W1")
    W2 = aesara.shared(W2v, name="W2")
    h = at.tanh(at.dot(x, W1))
    p = at.special.softmax(at.dot(h, W2), axis=-1)
    cost = -at.mean(at.log(p) * _one_hot(labels, 5)) * 5  # mean cross-entropy over 64 rows
    g1, g2 = aesara.grad(cost, [W1, W2])
    step = aesara.function([x, labels], cost, updates=[(W1, W1 - 0.5 * g1), (W2, W2 - 0.5 * g2)])
    c0 = step(X, t)

    # NumPy's cost and gradients, by hand.
    hh = np.tanh(X @ W1v)
    logits = hh @ W2v
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    pp = e / e.sum(axis=1, keepdims=True)
    onehot = np.eye(5)[t]
    np.testing.assert_allclose(c0, -np.mean(np.log(pp) * onehot) * 5, rtol=1e-12)
    d = (pp - onehot) / 64
    gW2 = hh.T @ d
    gW1 = X.T @ ((d @ W2v.T) * (1 - hh * hh))
    np.testing.assert_allclose(W2.get_value(), W2v - 0.5 * gW2, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(W1.get_value(), W1v - 0.5 * gW1, rtol=1e-10, atol=1e-12)


def _one_hot(labels, n):
    """(labels[:, None] == arange(n)) as float64, built from graph ops."""
    columns = at.constant(np.arange(n))
    return at.cast(at.eq(labels.dimshuffle(0, "x"), columns.dimshuffle("x", 0)), "float64")
