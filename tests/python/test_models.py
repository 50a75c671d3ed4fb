"""End-to-end training programs (tests/python/model_programs.py) under Kiln, checked against the
losses Aesara 2.9.4 computed for the same program text (tests/golden/aesara_models.json, written
by tests/golden/gen_aesara_models.py)."""
import json
import os

import numpy as np

import kiln
import model_programs

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "golden", "aesara_models.json")
with open(GOLDEN) as f:
    AESARA = json.load(f)


def test_lenet_trains_as_under_aesara(server):
    got = model_programs.lenet(kiln)
    want = AESARA["lenet"]
    np.testing.assert_allclose(got["losses"], want["losses"], rtol=1e-10)
    assert got["predictions"] == want["predictions"]


def test_denoising_autoencoder_without_corruption_trains_as_under_aesara(server):
    got = model_programs.denoising_autoencoder(kiln, corruption_level=0.0)
    want = AESARA["dae_uncorrupted"]
    np.testing.assert_allclose(got["costs"], want["costs"], rtol=1e-10)
    assert got["kept_fraction"] == 1.0


def test_denoising_autoencoder_with_randomstream_corruption(server):
    # Kiln's generator is Philox, Aesara's NumPy's: the masks differ, their statistics do not.
    got = model_programs.denoising_autoencoder(kiln, corruption_level=0.3)
    want = AESARA["dae_corrupted"]
    # 3,200 Bernoulli(0.7) draws: a standard deviation of 0.008.
    assert abs(got["kept_fraction"] - 0.7) < 0.04
    # Over eight stream seeds Kiln's costs were within 2.1% of Aesara's at every step.
    np.testing.assert_allclose(got["costs"], want["costs"], rtol=0.05)
    assert got["costs"][-1] < got["costs"][0] - 10
