"""pip install of client/python (offline, Debian's pip and setuptools): the installed package
carries stubs generated from proto/, the native module kiln._core built by CMake (in the build
directory KILN_BUILD_DIR, set by CTest) and a `kiln` script, and runs the seed against a server."""
import os
import shutil
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def test_pip_install_gives_a_working_package(server, tmp_path):
    src = tmp_path / "src"
    shutil.copytree(os.path.join(ROOT, "client", "python"), src / "client" / "python",
                    ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
    shutil.copytree(os.path.join(ROOT, "proto"), src / "proto")
    target = tmp_path / "site"
    build_env = dict(os.environ, KILN_SOURCE_DIR=ROOT)
    out = subprocess.run([sys.executable, "-m", "pip", "install", "--no-build-isolation",
                          "--no-deps", "--no-index", "--quiet", "--target", str(target),
                          str(src / "client" / "python")], capture_output=True, text=True,
                         env=build_env)
    assert out.returncode == 0, out.stderr
    assert (target / "kiln" / "v1" / "service_pb2_grpc.py").exists()
    assert len(list((target / "kiln").glob("_core.*.so"))) == 1
    env = {k: v for k, v in os.environ.items() if k not in ("KILN_PB_DIR", "PYTHONPATH")}
    env.update(PYTHONPATH=str(target), KILN_SERVER=server)
    code = ("import kiln, kiln.tensor as kt\n"
            "a = kt.vector('a')\n"
            "print(kiln.function([a], a + a ** 10)([0, 1, 2]))\n")
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         cwd=str(tmp_path))
    assert run.returncode == 0, run.stderr
    assert run.stdout == "[   0.    2. 1026.]\n"
    script = subprocess.run([str(target / "bin" / "kiln"), "stats"], env=env,
                            capture_output=True, text=True, cwd=str(tmp_path))
    assert script.returncode == 0, script.stderr
    assert "compiles " in script.stdout
