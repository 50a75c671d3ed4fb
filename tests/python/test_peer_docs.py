"""Aesara 2.9.4's and PyTensor 2.34's documentation examples for linear algebra, special
functions, einsum and vectorize, as a specification of Kiln's Python API.

tests/golden/peer_docs/<peer>-<source>.txt holds the examples of a doc page or of a module's
docstrings with the output the peer printed (tests/golden/gen_peer_docs.py writes them). Each
transcript runs here in one namespace on a real kiln-server, with only its imports rewritten
(`import pytensor.tensor as pt` -> `import kiln.tensor as pt`, `import aesara` -> `import kiln as
aesara`...), and every example is one test whose output doctest's OutputChecker compares with
the peer's, module paths in class reprs aside (test_aesara_docs.py's runner and checker).

Examples Kiln fails today are listed in peer_docs_known_failures.txt and xfail; an unlisted
failure fails, and so does a listed example that passes (delete its line): the list only
shrinks."""
import doctest
import glob
import os
import re

import pytest

from test_aesara_docs import (Summary, check_example, check_known_failures, describe,
                              example_keys, load_known_failures, run_examples)

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "..", "golden", "peer_docs")
KNOWN_FAILURES = os.path.join(HERE, "peer_docs_known_failures.txt")
SEED, FLOATX = 1234, "float64"  # as gen_peer_docs.py ran the transcripts
PEER = r"(aesara|pytensor)"
IMPORTS = [
    (re.compile(r"^(\s*)import %s((?:\.\w+)*) as " % PEER, re.M), r"\1import kiln\3 as "),
    (re.compile(r"^(\s*)import %s(?=\s*(?:#|$))" % PEER, re.M), r"\1import kiln as \2"),
    (re.compile(r"^(\s*)from %s((?:\.\w+)*) import " % PEER, re.M), r"\1from kiln\3 import ")]


def load_transcripts():
    """{transcript: [doctest.Example]} for every transcript."""
    parser = doctest.DocTestParser()
    transcripts = {}
    for path in sorted(glob.glob(os.path.join(GOLDEN, "*.txt"))):
        with open(path) as f:
            transcripts[os.path.basename(path)[:-len(".txt")]] = parser.get_examples(f.read())
    return transcripts


TRANSCRIPTS = load_transcripts()
KEYS = {name: example_keys(name, examples) for name, examples in TRANSCRIPTS.items()}
CASES = [(name, i) for name, examples in TRANSCRIPTS.items() for i in range(len(examples))]


def kiln_source(source):
    """An example's source with the peer's imports turned into Kiln's."""
    for pattern, replacement in IMPORTS:
        source = pattern.sub(replacement, source)
    return source


def run_transcript(name):
    """Runs one transcript's examples in one namespace on Kiln: [(passed, got)] in order."""
    return run_examples(TRANSCRIPTS[name], name, os.path.join(GOLDEN, name + ".txt"),
                        kiln_source, SEED, FLOATX)


@pytest.fixture(scope="module")
def known_failures():
    """The examples listed as failing on Kiln today."""
    return load_known_failures(KNOWN_FAILURES)


@pytest.fixture(scope="module")
def transcript_outcomes(server, request, known_failures):
    """transcript -> [(passed, got)], each transcript run once on the session's kiln-server."""
    results = {}
    request.config.pluginmanager.register(Summary("peer docs", KEYS, results, known_failures))

    def outcomes(name):
        if name not in results:
            results[name] = run_transcript(name)
        return results[name]
    return outcomes


def _describe(name, index, got):
    """A failing example of a transcript."""
    return describe(TRANSCRIPTS[name][index], "tests/golden/peer_docs/%s.txt" % name,
                    name.split("-")[0], got)


@pytest.mark.parametrize("name,index", CASES,
                         ids=["%s:%d" % (n, TRANSCRIPTS[n][i].lineno + 1) for n, i in CASES])
def test_peer_doc_example(transcript_outcomes, known_failures, name, index):
    """One documentation example prints on Kiln what it printed on the peer (or is listed)."""
    passed, got = transcript_outcomes(name)[index]
    check_example(passed, got, KEYS[name][index], known_failures,
                  "tests/python/peer_docs_known_failures.txt",
                  lambda: _describe(name, index, got))


def test_known_failures_are_examples(known_failures):
    """Every line of the known-failures list names an example of a transcript."""
    check_known_failures(known_failures, KEYS, "tests/golden/peer_docs")


def test_every_peer_has_transcripts():
    """Both peers' documentation is represented (the generator ran under each)."""
    assert {name.split("-")[0] for name in TRANSCRIPTS} == {"aesara", "pytensor"}
