"""Aesara's function options carried by the protocol: NanGuardMode and DebugMode run on the
server, profile=True returns the server's profile summary, name, and the modes by name."""
import io
import pickle

import numpy as np
import pytest

import kiln
import kiln.tensor as kt
from kiln.compile.debugmode import DebugMode
from kiln.compile.mode import FAST_COMPILE, Mode, get_mode
from kiln.compile.nanguardmode import NanGuardMode


def test_nan_guard_mode_names_the_node(server):
    x = kt.dvector("x")
    f = kiln.function([x], kt.log(x) * 2.0, mode=NanGuardMode(True, True, False))
    np.testing.assert_allclose(f([1.0, np.e]), [0.0, 2.0])
    for bad in ([-1.0], [0.0]):  # a NaN, an infinity
        with pytest.raises(kiln.KilnError) as e:
            f(bad)
        assert "log" in e.value.message, e.value.message
    plain = kiln.function([x], kt.log(x) * 2.0)
    assert plain.function_id != f.function_id
    assert np.isnan(plain([-1.0])[0])
    # Both checks off is no check at all.
    assert kiln.function([x], kt.log(x), mode=NanGuardMode(False, False, False)).signature.check == 0
    with pytest.warns(UserWarning, match="big_is_error"):
        NanGuardMode(big_is_error=True)


def test_debug_mode_runs_both_graphs(server):
    x = kt.dmatrix("x")
    y = kt.exp(x) * x / x + kt.sum(x ** 2)
    for mode in (DebugMode(), "DebugMode", "DEBUG_MODE"):
        f = kiln.function([x], y, mode=mode)
        v = np.arange(1.0, 5.0).reshape(2, 2)
        np.testing.assert_allclose(f(v), np.exp(v) + (v ** 2).sum())
        assert f.signature.check == kiln._pb.options_pb2.CHECK_DEBUG
    with pytest.raises(kiln.KilnError, match="log"):
        kiln.function([x], kt.log(x), mode="DebugMode")(-np.ones((1, 1)))


def test_profile_returns_the_servers_summary(server, monkeypatch):
    x = kt.dvector("x")
    f = kiln.function([x], kt.tanh(kt.dot(x, x)) + x, profile=True, name="my_fn")
    assert f.name == "my_fn"
    for _ in range(3):
        f(np.ones(4))
    out = io.StringIO()
    f.profile.summary(file=out)
    text = out.getvalue()
    assert text.startswith("Function profiling\n==================\n  Message: my_fn\n"), text
    assert "Time in 3 calls to Function.__call__" in text
    assert "<% time> <sum %> <time (s)> <#call> <Op name>" in text
    assert "Elemwise" in text or "Composite" in text
    assert kiln.function([x], x * 2.0).profile is None
    monkeypatch.setattr(kiln.config, "profile", True)
    g = kiln.function([x], x * 3.0)
    g(np.ones(1))
    assert "Time in 1 calls" in g.profile.summary_text()
    # A pickled profiled function keeps its name and profiles again where it lands.
    h = pickle.loads(pickle.dumps(f))
    assert h.name == "my_fn" and h.profile is not None


def test_modes_by_name_and_object(server):
    x = kt.dvector("x")
    fast = kiln.function([x], x * 2.0 + x, mode=FAST_COMPILE)
    none = kiln.function([x], x * 2.0 + x, mode=Mode(optimizer=None))
    run = kiln.function([x], x * 2.0 + x, mode="FAST_RUN")
    assert len({fast.function_id, none.function_id, run.function_id}) == 3
    for f in (fast, none, run):
        np.testing.assert_allclose(f([1.0]), [3.0])
    assert get_mode(None).optimizer == "fast_run"
    with pytest.raises(ValueError, match="mode 'JAX'"):
        kiln.function([x], x, mode="JAX")
    with pytest.raises(ValueError, match="optimizer"):
        Mode(optimizer="o4")
