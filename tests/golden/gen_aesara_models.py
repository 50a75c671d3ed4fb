"""Writes tests/golden/aesara_models.json: the losses of tests/python/model_programs.py's
LeNet and denoising autoencoder as Aesara 2.9.4 computes them (float64, its default floatX).

Run under an Aesara 2.9.4 installation (not needed by the tests):
    AESARA_FLAGS=optimizer_excluding=AbstractConvCheck /usr/bin/python3 tests/golden/gen_aesara_models.py
(without a C compiler Aesara has no conv implementation but its ops' Python perform, which
the AbstractConvCheck pass would refuse)
"""
import json
import os
import sys

import aesara

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import model_programs  # noqa: E402

assert aesara.__version__.startswith("2.9.4"), aesara.__version__
golden = {
    "aesara_version": aesara.__version__,
    "lenet": model_programs.lenet(aesara),
    # With nothing corrupted the draws do not matter: Aesara's numbers exactly.
    "dae_uncorrupted": model_programs.denoising_autoencoder(aesara, corruption_level=0.0),
    # Aesara's generator is NumPy's, Kiln's is Philox: the costs agree only statistically.
    "dae_corrupted": model_programs.denoising_autoencoder(aesara, corruption_level=0.3),
}
with open(os.path.join(HERE, "aesara_models.json"), "w") as f:
    json.dump(golden, f, indent=1)
    f.write("\n")
print(json.dumps(golden)[:400])
