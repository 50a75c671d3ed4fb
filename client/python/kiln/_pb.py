"""The kiln.v1 protobuf and gRPC modules, generated from proto/ by protoc (never by hand), and
the native module kiln._core (core's graph model).

An installed package has them inside (setup.py generates the stubs and builds kiln._core with
CMake). In the source tree the build makes them in build/client/python/gen (CMake targets
kiln_python_stubs and kiln_core_python), found there or through KILN_PB_DIR; without a build,
the stubs are generated once with Debian's protoc and grpc_python_plugin into ~/.cache/kiln
(keyed by the .proto files' hash), but kiln._core needs the build.
"""
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

_HERE = os.path.dirname(os.path.abspath(__file__))
_PROTOS = ("kiln/v1/types.proto", "kiln/v1/graph.proto", "kiln/v1/options.proto",
           "kiln/v1/errors.proto", "kiln/v1/service.proto")


def _proto_root():
    for root in (os.environ.get("KILN_PROTO_DIR"), os.path.join(_HERE, "proto"),
                 os.path.join(_HERE, "..", "..", "..", "proto")):
        if root and os.path.exists(os.path.join(root, _PROTOS[-1])):
            return os.path.abspath(root)
    raise ImportError("kiln: cannot find proto/kiln/v1/*.proto (set KILN_PROTO_DIR)")


def _generate(root):
    digest = hashlib.sha256()
    for p in _PROTOS:
        with open(os.path.join(root, p), "rb") as f:
            digest.update(f.read())
    out = os.path.join(os.path.expanduser("~"), ".cache", "kiln", "pb-" + digest.hexdigest()[:16])
    if os.path.exists(os.path.join(out, "kiln", "v1", "service_pb2_grpc.py")):
        return out
    plugin = shutil.which("grpc_python_plugin")
    if plugin is None or shutil.which("protoc") is None:
        raise ImportError("kiln: protoc and grpc_python_plugin are needed to generate the stubs "
                          "(apt-get install protobuf-compiler protobuf-compiler-grpc)")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    tmp = tempfile.mkdtemp(dir=os.path.dirname(out))
    subprocess.run(["protoc", "-I" + root, "--python_out=" + tmp, "--grpc_python_out=" + tmp,
                    "--plugin=protoc-gen-grpc_python=" + plugin] + list(_PROTOS), check=True)
    try:
        os.rename(tmp, out)
    except OSError:  # another process generated them first
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def _load():
    if os.path.exists(os.path.join(_HERE, "v1", "service_pb2_grpc.py")):
        return  # installed: the stubs and kiln._core are in the package
    built = os.path.abspath(os.path.join(_HERE, "..", "..", "..", "build", "client", "python",
                                         "gen"))
    gen = os.environ.get("KILN_PB_DIR")
    if gen is None:
        stubs = os.path.isdir(os.path.join(built, "kiln", "v1"))
        gen = built if stubs else _generate(_proto_root())
    package = sys.modules["kiln"]
    for path in (os.path.join(gen, "kiln"), os.path.join(built, "kiln")):
        if path not in package.__path__:
            package.__path__.append(path)  # kiln.v1 (the stubs) and kiln._core


_load()
from kiln.v1 import errors_pb2, graph_pb2, options_pb2, service_pb2, service_pb2_grpc, types_pb2  # noqa: E402,F401,E501
