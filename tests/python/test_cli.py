"""The kiln command-line tool against a real server."""
import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def kiln_cli(server, *args):
    env = dict(os.environ, KILN_SERVER=server,
               PYTHONPATH=os.path.join(ROOT, "client", "python"))
    return subprocess.run([sys.executable, "-m", "kiln"] + list(args), env=env,
                          capture_output=True, text=True)


def test_compile_run_grad_print_stats(server):
    out = kiln_cli(server, "compile", "-i", "a:vector", "a + a**10")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("function_id ") and len(lines[0].split()[1]) == 64
    assert lines[1] == "input  a TensorType(float64, (?,))"
    assert lines[2] == "output TensorType(float64, (?,))"

    out = kiln_cli(server, "run", "-i", "a:vector", "a + a**10", "--arg", "a=[0, 1, 2]")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "[   0.,    2., 1026.]\n"

    out = kiln_cli(server, "grad", "-i", "x:dvector", "kt.sum(x ** 2)", "--wrt", "x")
    assert out.returncode == 0, out.stderr
    assert "x [id" in out.stdout

    out = kiln_cli(server, "print", "-i", "x:dmatrix", "x * 2.0")
    assert out.stdout.splitlines()[0] == "Elemwise{mul,no_inplace} [id A]"
    out = kiln_cli(server, "print", "-i", "a:vector", "a + a**10", "--optimized")
    assert out.stdout.startswith("Elemwise{Composite{")
    out = kiln_cli(server, "print", "-i", "x:dmatrix", "x * 2.0", "--format", "dot")
    assert out.stdout.startswith("digraph")

    out = kiln_cli(server, "stats")
    assert out.returncode == 0, out.stderr
    assert "compiles " in out.stdout


def test_errors_are_messages_not_tracebacks(server):
    out = kiln_cli(server, "run", "-i", "x:dvector", "x.reshape((2, 2))", "--arg", "x=[1, 2, 3]")
    assert out.returncode != 0
    assert out.stderr.startswith("kiln: INVALID_ARGUMENT: ")
    assert "Traceback" not in out.stderr
    out = kiln_cli(server, "compile", "-i", "x:nonsense", "x")
    assert "bad input 'x:nonsense'" in out.stderr


def test_a_serialized_graph_compiles_with_the_modes_checks(server, tmp_path):
    import kiln.tensor as kt
    from kiln import wire
    x = kt.dvector("x")
    path = tmp_path / "graph.pb"
    path.write_bytes(wire.graph_to_proto([x], [kt.log(x)]).SerializeToString())
    ids = set()
    for mode in ("FAST_RUN", "NanGuardMode", "DebugMode"):
        out = kiln_cli(server, "compile", "--graph", str(path), "--mode", mode)
        assert out.returncode == 0, out.stderr
        ids.add(out.stdout.split()[1])
    assert len(ids) == 3  # the check is part of the function's identity
