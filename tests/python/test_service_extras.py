"""What the server offers beside kiln.v1 and what the README promises, checked from Python:
server reflection lists the service, grad's warnings reach the caller, and the README's Python
quick start runs as written."""
import os
import re
import warnings

import grpc
import numpy as np

import kiln
import kiln.tensor as kt

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def test_reflection_lists_the_kiln_service(server):
    channel = grpc.insecure_channel(server)
    info = channel.stream_stream("/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
                                 request_serializer=None, response_deserializer=None)
    # ServerReflectionRequest{list_services: ""}: field 7, an empty string.
    responses = list(info(iter([b"\x3a\x00"]), timeout=10))
    assert len(responses) == 1
    assert b"kiln.v1.Kiln" in responses[0]
    assert b"grpc.health.v1.Health" in responses[0]


def test_grad_warnings_reach_the_caller(server):
    x, z = kt.dvectors("x", "z")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kiln.grad(kt.sum(x), [x, z], disconnected_inputs="warn")
    # As in Aesara: one warning for the variable, one for its DisconnectedType gradient.
    messages = [str(w.message) for w in caught]
    assert len(messages) == 2
    assert messages[0].startswith("grad method was asked to compute the gradient with respect to "
                                  "a variable that is not part of the computational graph")
    assert messages[0].endswith(": z")
    assert messages[1].endswith(": <DisconnectedType>")


def test_readme_quick_start_runs(server, capsys):
    with open(os.path.join(ROOT, "README.md")) as f:
        readme = f.read()
    block = re.search(r"```python\n(.*?)```", readme, re.S).group(1)
    namespace = {}
    exec(compile(block, "README.md", "exec"), namespace)
    printed = capsys.readouterr().out
    assert printed == "[1. 2. 3.]\n"
    np.testing.assert_allclose(namespace["w"].get_value(), [1.0, 2.0, 3.0], rtol=1e-6)
