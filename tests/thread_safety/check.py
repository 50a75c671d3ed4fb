#!/usr/bin/python3
"""Clang's thread-safety analysis over the server's sources: every member marked
ABSL_GUARDED_BY is only touched with its mutex held, and every ABSL_EXCLUSIVE_LOCKS_REQUIRED
function only called so. Runs clang++ -fsyntax-only with each file's flags from the build's
compile_commands.json (the build itself may use GCC, where the annotations are no-ops).

Usage: check.py <build dir>   (exit status 1 on any finding)
"""
import json
import os
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

CHECKED = ("/server/", "/core/runtime/")
CLANG_FLAGS = ["-fsyntax-only", "-Wthread-safety", "-Werror=thread-safety",
               "-Wno-unknown-warning-option"]


def clang_command(entry):
    args = shlex.split(entry["command"])[1:]
    kept, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a in ("-o", "-MF", "-MT"):
            skip = True
        elif a not in ("-c", "-MD"):
            kept.append(a)
    return ["clang++"] + CLANG_FLAGS + kept


def main():
    build = sys.argv[1]
    entries = [e for e in json.load(open(os.path.join(build, "compile_commands.json")))
               if any(d in e["file"] for d in CHECKED) and not e["file"].endswith("_test.cc")
               and "_benchmark" not in e["file"]]
    if not entries:
        print("thread_safety: no server sources in compile_commands.json")
        return 1

    def check(entry):
        r = subprocess.run(clang_command(entry), cwd=entry["directory"], capture_output=True,
                           text=True, timeout=600)
        return entry["file"], r.returncode, r.stderr

    failed = 0
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for path, code, err in pool.map(check, entries):
            if code != 0:
                failed += 1
                print(f"== {path}\n{err}")
    print(f"thread_safety: {len(entries)} files, {failed} with findings")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
