"""ONNX's backend test cases (Debian's libonnx-testdata, 1,072) through a real kiln-server, as a
client sends them: kiln.onnx.load (the ImportOnnx RPC), kiln.function (Compile) and a call
(Execute over gRPC or the lane), each case's test_data_set_0 compared with its outputs at ONNX's
tolerances (rtol 1e-3, atol 1e-7; dtypes and shapes equal; integers exact), as the in-process
runner (tests/conformance/onnx) compares them. Every case tests/conformance/onnx/expected.txt
records as passing passes here too, and every case it records as unimplemented is refused with
UNIMPLEMENTED."""
import glob
import os

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import numpy_helper  # noqa: E402

import kiln  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DATA = os.environ.get("KILN_ONNX_TESTDATA", "/usr/share/libonnx-testdata/data")
EXPECTED = os.path.join(ROOT, "tests", "conformance", "onnx", "expected.txt")


def _expected():
    """{case: outcome} from expected.txt."""
    out = {}
    with open(EXPECTED) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            case, outcome = line.split()[:2]
            out[case] = outcome
    return out


def _tensors(folder, prefix):
    arrays = []
    for path in sorted(glob.glob(os.path.join(folder, prefix + "_*.pb")),
                       key=lambda p: int(p.rsplit("_", 1)[1][:-3])):
        t = onnx.TensorProto()
        with open(path, "rb") as f:
            t.ParseFromString(f.read())
        arrays.append(numpy_helper.to_array(t))
    return arrays


def _why_not_equal(got, want):
    """Why `got` is not `want` at ONNX's tolerances, or None."""
    got = np.asarray(got)
    if got.dtype != want.dtype:
        return "dtype %s != %s" % (got.dtype, want.dtype)
    if got.shape != want.shape:
        return "shape %s != %s" % (got.shape, want.shape)
    if want.dtype.kind in "fc":
        ok = np.isclose(got, want, rtol=1e-3, atol=1e-7, equal_nan=True)
    else:
        ok = got == want
    if not np.all(ok):
        i = int(np.argmin(np.ravel(ok)))
        return "element %d: %r != %r" % (i, np.ravel(got)[i], np.ravel(want)[i])
    return None


def _run(case):
    """None when the case passes on the server, else why not; KilnError when refused."""
    folder = os.path.join(DATA, case)
    with open(os.path.join(folder, "model.onnx"), "rb") as f:
        model = kiln.onnx.load(f.read())
    fn = kiln.function(model.inputs, model.outputs, on_unused_input="ignore")
    data = os.path.join(folder, "test_data_set_0")
    got = fn(*_tensors(data, "input"))
    got = got if isinstance(got, list) else [got]
    want = _tensors(data, "output")
    for k, (g, w) in enumerate(zip(got, want)):
        why = _why_not_equal(g, w)
        if why:
            return "output %d: %s" % (k, why)
    return None


@pytest.mark.skipif(not os.path.isdir(DATA), reason="libonnx-testdata is not installed")
def test_every_backend_case_on_a_server(server):
    expected = _expected()
    assert len(expected) == 1072
    wrong, passed = [], 0
    for case, outcome in sorted(expected.items()):
        if outcome not in ("pass", "unimplemented"):
            continue
        try:
            why = _run(case)
        except kiln.KilnError as e:
            if outcome == "pass" or e.code != "UNIMPLEMENTED":
                wrong.append("%s: %s %s" % (case, e.code, e.message[:200]))
            continue
        if outcome == "pass" and why is not None:
            wrong.append("%s: %s" % (case, why))
        elif outcome == "pass":
            passed += 1
        elif outcome == "unimplemented":
            wrong.append("%s: expected UNIMPLEMENTED, ran (%s)" % (case, why or "passed"))
    assert not wrong, "\n".join(wrong[:30])
    assert passed == sum(o == "pass" for o in expected.values())
