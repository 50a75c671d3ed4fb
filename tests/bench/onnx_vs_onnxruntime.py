#!/usr/bin/python3
"""ONNX's backend test cases (Debian's libonnx-testdata, 1,072) on Kiln and on ONNX Runtime, in
the same run: Kiln's side is tests/conformance/onnx's runner (import, compile, run, compare at
rtol 1e-3, atol 1e-7), ONNX Runtime's is tests/bench/onnxruntime/ort_cases.js (onnxruntime-node
1.30, CPU, installed from npm with ONNXRUNTIME_NODE_INSTALL=skip on first use) with the same
comparison. Prints the cases by operator (the first non-Constant operator of each model) where
the two differ, then

BENCH onnx_node_tests kiln=<passed> ref=<passed> unit=cases ref_name=onnxruntime total=<cases>

Usage: onnx_vs_onnxruntime.py [case-substring]  (KILN_BUILD_DIR: the build with
tests/onnx_conformance_tests, default build/; KILN_ONNX_TESTDATA: the data folder)."""
import collections
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ORT_DIR = os.path.join(ROOT, "tests", "bench", "onnxruntime")
DATA = os.environ.get("KILN_ONNX_TESTDATA", "/usr/share/libonnx-testdata/data")


def kiln_outcomes():
    """{case: (outcome, operator)} from the conformance runner."""
    binary = os.path.join(os.environ.get("KILN_BUILD_DIR", os.path.join(ROOT, "build")), "tests",
                          "onnx_conformance_tests")
    with tempfile.NamedTemporaryFile("r", suffix=".txt") as out:
        env = dict(os.environ, KILN_ONNX_OUTCOMES=out.name, KILN_ONNX_TESTDATA=DATA)
        subprocess.run([binary, "--gtest_filter=OnnxConformance.*"], env=env, check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        rows = [line.split(" ", 2) for line in out.read().splitlines()]
    return {case: (outcome, op) for case, outcome, op in rows}


def ort_outcomes():
    if not os.path.isdir(os.path.join(ORT_DIR, "node_modules", "onnxruntime-node")):
        subprocess.run(["npm", "install", "--no-audit", "--no-fund"], cwd=ORT_DIR, check=True,
                       env=dict(os.environ, ONNXRUNTIME_NODE_INSTALL="skip"),
                       stdout=subprocess.DEVNULL)
    out = subprocess.run(["node", "ort_cases.js", DATA], cwd=ORT_DIR, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    only = sys.argv[1] if len(sys.argv) > 1 else ""
    kiln = {c: v for c, v in kiln_outcomes().items() if only in c}
    ort = {c: v for c, v in ort_outcomes().items() if only in c}
    by_op = collections.defaultdict(lambda: [0, 0, 0])  # cases, kiln, ort
    for case, (outcome, op) in kiln.items():
        row = by_op[op]
        row[0] += 1
        row[1] += outcome == "pass"
        row[2] += ort.get(case) == "pass"
    print("# operators where the two differ: cases, kiln passes, onnxruntime passes")
    for op, (n, k, r) in sorted(by_op.items()):
        if k != r:
            print("#   %-28s %4d %4d %4d" % (op, n, k, r))
    unsupported = sum(v == "unsupported" for v in ort.values())
    print("# onnxruntime-node cannot hold the values of %d cases (sequences, optionals, "
          "bfloat16...): counted as not passed" % unsupported)
    passed_k = sum(o == "pass" for o, _ in kiln.values())
    passed_r = sum(v == "pass" for v in ort.values())
    print("BENCH onnx_node_tests kiln=%d ref=%d unit=cases ref_name=onnxruntime total=%d"
          % (passed_k, passed_r, len(kiln)), flush=True)


if __name__ == "__main__":
    main()
