#!/usr/bin/python3
"""Writes tests/golden/aesara_docs/<page>.txt: the `>>>` examples of Aesara's documentation with
the output Aesara 2.9.4 really printed, for tests/python/test_aesara_docs.py to check Kiln with.

    PYTHONPATH=<aesara-2.9.4 checkout> AESARA_FLAGS=cxx= /usr/bin/python3 \
        tests/golden/gen_aesara_docs.py [aesara-doc-folder]

(Aesara's tag rel-2.9.4, with its aesara/_version.py written by hand, runs under Debian's
Python and NumPy in pure-Python mode.)

Each page's examples (doctest.DocTestParser) run in order in one namespace, as doctest runs
them, after numpy.random.seed(SEED) and aesara.config.floatX = FLOATX. Examples the doc marks
+SKIP, and examples that raise where the doc expects no exception (or the reverse), are dropped
and listed in the transcript's header. The recorded output is Aesara's, except that a doc's
+ELLIPSIS output that matches Aesara's is kept, and memory addresses become 0x... under an added
+ELLIPSIS directive."""
import doctest
import glob
import os
import re
import sys

import numpy

import aesara

from doc_examples import add_ellipsis, execute, prompt, want_text

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "aesara_docs")
SEED = 1234
FLOATX = "float64"
PAGES = ["fundamentals/graph/graphstructures.rst", "fundamentals/graph/type.rst",
         "reference/gradient/gradient_tutorial.rst", "reference/tensor/index.rst",
         "reference/tensor/tensor.rst", "reference/tensor/create.rst",
         "reference/tensor/shapes.rst", "reference/tensor/operations*.rst",
         "compile/function.rst", "compile/io.rst", "compile/shared.rst",
         "troubleshoot/printing.rst", "how_to_think_in_aesara.rst", "glossary.rst"]
ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{4,}\b")
TRACEBACK = "Traceback (most recent call last):\n  ...\n"
# The imports the doc's prose assumes ("assume that aesara.tensor is imported as at"), run
# first on every page and written as the transcript's first examples.
SETUP = ["import numpy as np", "import aesara", "import aesara.tensor as at",
         "from aesara import function"]


def page_name(relpath):
    """The transcript's name of a doc page: compile/io.rst -> compile-io."""
    return relpath[:-len(".rst")].replace("/", "-")


def flags(example):
    """The doctest option flags an example's directives turn on."""
    return sum(flag for flag, on in example.options.items() if on)


def record(example, globs):
    """Runs an example; returns (source, want) to keep, or (None, reason) to drop it."""
    got, exc = execute(example.source, globs)
    if (exc is None) != (example.exc_msg is None):
        return None, ("raised " + exc.strip().splitlines()[0] if exc
                      else "the doc expects an exception; Aesara raised none")
    actual = got if exc is None else TRACEBACK + exc
    checker = doctest.OutputChecker()
    if example.options.get(doctest.ELLIPSIS) and checker.check_output(
            example.want, actual, flags(example)):
        return example.source, example.want
    source = example.source
    if ADDRESS.search(actual):
        actual = ADDRESS.sub("0x...", actual)
        if not example.options.get(doctest.ELLIPSIS):
            source = add_ellipsis(source)
    return source, actual


def run_page(path, relpath):
    """The transcript of one doc page: a prose header, then the kept examples."""
    parser = doctest.DocTestParser()
    with open(path) as f:
        examples = parser.get_examples(f.read())
    numpy.random.seed(SEED)
    aesara.config.floatX = FLOATX
    globs = {"__name__": "__main__"}
    body, notes, end = [], [], None
    for line in SETUP:
        got, exc = execute(line + "\n", globs)
        assert not got and not exc, (line, got, exc)
    body.append("".join(prompt(line) for line in SETUP))
    for ex in examples:
        line = "doc line %d: %s" % (ex.lineno + 1, ex.source.strip().splitlines()[0])
        if body and body[-1] != "\n" and ex.lineno != end:
            body.append("\n")  # the doc's blocks stay apart
        end = ex.lineno + ex.source.count("\n") + ex.want.count("\n")
        if ex.options.get(doctest.SKIP):
            notes.append("%s (+SKIP in the doc)" % line)
            continue
        source, want = record(ex, globs)
        if source is None:
            notes.append("%s (%s)" % (line, want))
            continue
        if source != ex.source:
            notes.append("%s (+ELLIPSIS added: a memory address)" % line)
        elif want != ex.want:
            notes.append("%s (Aesara's output differs from the doc's)" % line)
        body.append(prompt(source) + want_text(want))
    header = ("Aesara %s documentation examples from doc/%s, with the output Aesara printed "
              "(pure-Python mode), written by "
              "tests/golden/gen_aesara_docs.py. The examples run in order in one namespace "
              "after numpy.random.seed(%d) and aesara.config.floatX = %r, and after the "
              "first %d examples, which are not the doc's but the imports its prose assumes; "
              "tests/python/test_aesara_docs.py runs them on Kiln.\n"
              % (aesara.__version__, relpath, SEED, FLOATX, len(SETUP)))
    if notes:
        header += "\nDropped or changed:\n" + "".join("  %s\n" % n for n in notes)
    return header + "\n" + "".join(body), len(examples), sum(1 for b in body[1:] if b != "\n")


def main():
    """Writes a transcript for every listed page that has examples."""
    doc = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(aesara.__file__))), "doc")
    os.makedirs(OUT, exist_ok=True)
    for pattern in PAGES:
        for path in sorted(glob.glob(os.path.join(doc, pattern))):
            relpath = os.path.relpath(path, doc)
            text, found, kept = run_page(path, relpath)
            if not found:
                continue
            with open(os.path.join(OUT, page_name(relpath) + ".txt"), "w") as f:
                f.write(text)
            print("%s: %d examples, %d kept" % (page_name(relpath), found, kept))


if __name__ == "__main__":
    main()
