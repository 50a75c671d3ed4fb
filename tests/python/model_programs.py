"""Two Theano-era training programs written once against Aesara 2.9.4's API.

Each function takes the library module (`aesara` or `kiln`) and imports everything else from it,
so the same text runs under Aesara (tests/golden/gen_aesara_models.py, which records the losses)
and under Kiln (test_models.py, which checks them): a program that runs with only its imports
changed. The data and the initial weights come from NumPy's default_rng, the same in both runs.
"""
import importlib

import numpy as np


def _modules(lib):
    name = lib.__name__
    return (importlib.import_module(name + ".tensor"),
            importlib.import_module(name + ".tensor.nnet"),
            importlib.import_module(name + ".tensor.signal.pool"))


def lenet(lib, steps=6, batch=32, seed=0):
    """A LeNet-style network (two conv + pool layers, a tanh hidden layer, a softmax) trained by
    SGD on generated 16x16 images: the loss before each step, and the last step's predictions."""
    at, nnet, pool = _modules(lib)
    rng = np.random.default_rng(seed)
    images = rng.standard_normal((batch, 1, 16, 16))
    upper_half_bright = images[:, 0, :8, :].sum(axis=(1, 2)) > 0
    labels = upper_half_bright.astype("int32") * 5 + rng.integers(0, 5, batch).astype("int32")

    def shared(shape, scale, name):
        return lib.shared(rng.standard_normal(shape) * scale, name=name)

    w1, b1 = shared((4, 1, 3, 3), 0.3, "w1"), lib.shared(np.zeros(4), name="b1")
    w2, b2 = shared((6, 4, 3, 3), 0.2, "w2"), lib.shared(np.zeros(6), name="b2")
    w3, b3 = shared((24, 20), 0.2, "w3"), lib.shared(np.zeros(20), name="b3")
    w4, b4 = shared((20, 10), 0.2, "w4"), lib.shared(np.zeros(10), name="b4")
    params = [w1, b1, w2, b2, w3, b3, w4, b4]

    x = at.tensor4("x")
    y = at.ivector("y")
    h1 = at.tanh(nnet.conv2d(x, w1, input_shape=(None, 1, 16, 16), filter_shape=(4, 1, 3, 3))
                 + b1.dimshuffle("x", 0, "x", "x"))
    p1 = pool.pool_2d(h1, ws=(2, 2), ignore_border=True)  # (batch, 4, 7, 7)
    h2 = nnet.relu(nnet.conv2d(p1, w2, border_mode="valid") + b2.dimshuffle("x", 0, "x", "x"))
    p2 = pool.pool_2d(h2, ws=(2, 2), ignore_border=True, mode="average_exc_pad")  # (batch, 6, 2, 2)
    h3 = at.tanh(at.dot(p2.flatten(2), w3) + b3)
    p_y = nnet.softmax(at.dot(h3, w4) + b4)
    loss = at.mean(nnet.categorical_crossentropy(p_y, y))
    grads = lib.grad(loss, params)
    train = lib.function([x, y], loss, updates=[(p, p - 0.1 * g) for p, g in zip(params, grads)])
    predict = lib.function([x], at.argmax(p_y, axis=1))
    losses = [float(train(images, labels)) for _ in range(steps)]
    return {"losses": losses, "predictions": predict(images).tolist()}


def denoising_autoencoder(lib, corruption_level=0.3, steps=8, seed=0, stream_seed=1234):
    """The Theano tutorial's denoising autoencoder (tied weights, sigmoid units, cross-entropy
    reconstruction cost) with RandomStream binomial corruption, trained by SGD: the cost of each
    step and the fraction of inputs the last step kept."""
    at, nnet, _ = _modules(lib)
    random = importlib.import_module(lib.__name__ + ".tensor.random.utils")
    rng = np.random.default_rng(seed)
    n_visible, n_hidden = 64, 20
    data = rng.uniform(size=(50, n_visible))
    bound = 4 * np.sqrt(6.0 / (n_hidden + n_visible))
    w = lib.shared(rng.uniform(low=-bound, high=bound, size=(n_visible, n_hidden)), name="W")
    b_hid = lib.shared(np.zeros(n_hidden), name="b")
    b_vis = lib.shared(np.zeros(n_visible), name="b_prime")
    srng = random.RandomStream(seed=stream_seed)

    x = at.dmatrix("x")
    kept = srng.binomial(n=1, p=1 - corruption_level, size=x.shape)
    tilde_x = kept * x
    hidden = at.sigmoid(at.dot(tilde_x, w) + b_hid)
    z = at.sigmoid(at.dot(hidden, w.T) + b_vis)
    cost = at.mean(-at.sum(x * at.log(z) + (1 - x) * at.log(1 - z), axis=1))
    params = [w, b_hid, b_vis]
    grads = lib.grad(cost, params)
    train = lib.function([x], [cost, at.mean(kept)],
                         updates=[(p, p - 0.1 * g) for p, g in zip(params, grads)])
    costs, kept_fraction = [], None
    for _ in range(steps):
        c, kept_fraction = train(data)
        costs.append(float(c))
    return {"costs": costs, "kept_fraction": float(kept_fraction)}
