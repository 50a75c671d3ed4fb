"""Builds the kiln package with its kiln.v1 stubs generated from ../../proto by protoc and
grpc_python_plugin (Debian's protobuf-compiler and protobuf-compiler-grpc)."""
import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO = os.path.join(HERE, "..", "..", "proto")


class BuildWithStubs(build_py):
    def run(self):
        super().run()
        plugin = shutil.which("grpc_python_plugin")
        if plugin is None or shutil.which("protoc") is None:
            raise RuntimeError("protoc and grpc_python_plugin are needed to build kiln")
        subprocess.run(["protoc", "-I" + PROTO, "--python_out=" + self.build_lib,
                        "--grpc_python_out=" + self.build_lib,
                        "--plugin=protoc-gen-grpc_python=" + plugin,
                        "kiln/v1/types.proto", "kiln/v1/graph.proto", "kiln/v1/options.proto",
                        "kiln/v1/service.proto"],
                       check=True)


setup(cmdclass={"build_py": BuildWithStubs})
