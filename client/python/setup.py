"""Builds the kiln package: its kiln.v1 stubs generated from ../../proto by protoc and
grpc_python_plugin (Debian's protobuf-compiler and protobuf-compiler-grpc), and its native module
kiln._core (core's graph model, pybind11) built by CMake from the Kiln source tree.

KILN_SOURCE_DIR names the source tree (default: the checkout this file is in) and
KILN_BUILD_DIR a CMake build directory to build kiln._core in (default: <source>/build, which
is configured for a Release build when it has no CMakeCache.txt)."""
import glob
import os
import shutil
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
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
                        "kiln/v1/errors.proto", "kiln/v1/service.proto"],
                       check=True)


class BuildCoreWithCMake(build_ext):
    """kiln._core: the CMake target kiln_core_python, copied into the package."""

    def build_extension(self, ext):
        source = os.path.abspath(os.environ.get("KILN_SOURCE_DIR") or os.path.join(HERE, "..", ".."))
        if not os.path.exists(os.path.join(source, "core", "CMakeLists.txt")):
            raise RuntimeError("kiln._core is built from the Kiln source tree: install from a "
                               "checkout, or set KILN_SOURCE_DIR to one")
        build = os.path.abspath(os.environ.get("KILN_BUILD_DIR") or os.path.join(source, "build"))
        if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
            subprocess.run(["cmake", "-S", source, "-B", build, "-G", "Ninja",
                            "-DCMAKE_BUILD_TYPE=Release", "-DKILN_TESTS=OFF"], check=True)
        subprocess.run(["cmake", "--build", build, "--target", "kiln_core_python"], check=True)
        built = glob.glob(os.path.join(build, "client", "python", "gen", "kiln", "_core.*.so"))
        if len(built) != 1:
            raise RuntimeError("kiln_core_python did not leave one _core module in %s" % build)
        dest = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(built[0], dest)


setup(cmdclass={"build_py": BuildWithStubs, "build_ext": BuildCoreWithCMake},
      ext_modules=[Extension("kiln._core", sources=[])])
