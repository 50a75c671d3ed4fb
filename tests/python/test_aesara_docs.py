"""Aesara 2.9.4's documentation examples as a specification of Kiln's Python API.

tests/golden/aesara_docs/<page>.txt holds each doc page's `>>>` examples with the output Aesara
printed (tests/golden/gen_aesara_docs.py writes them). Here each page runs on a real kiln-server
with only its imports rewritten (`import aesara` -> `import kiln as aesara`, `from aesara.X
import Y` -> `from kiln.X import Y`...) by doctest's runner, and every example is one test whose
output doctest's OutputChecker compares with Aesara's, the module path of class reprs aside
(`<class 'aesara.tensor.var.TensorVariable'>` reads as `<class '...TensorVariable'>`).

The examples Kiln fails today are listed in aesara_docs_known_failures.txt and xfail; an
unlisted failure fails, and so does a listed example that passes (delete its line): the list
only shrinks."""
import doctest
import glob
import os
import re
import traceback

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "..", "golden", "aesara_docs")
KNOWN_FAILURES = os.path.join(HERE, "aesara_docs_known_failures.txt")
SEED, FLOATX = 1234, "float64"  # as gen_aesara_docs.py ran the pages
IMPORTS = [(re.compile(r"^(\s*)import aesara((?:\.\w+)*) as ", re.M), r"\1import kiln\2 as "),
           (re.compile(r"^(\s*)import aesara(?=\s*(?:#|$))", re.M), r"\1import kiln as aesara"),
           (re.compile(r"^(\s*)from aesara((?:\.\w+)*) import ", re.M), r"\1from kiln\2 import ")]
CLASS_REPR = re.compile(r"<class '(?:aesara|kiln)(?:\.\w+)*\.(\w+)'>")


def load_pages():
    """{page: [doctest.Example]} for every transcript."""
    parser = doctest.DocTestParser()
    pages = {}
    for path in sorted(glob.glob(os.path.join(GOLDEN, "*.txt"))):
        with open(path) as f:
            pages[os.path.basename(path)[:-len(".txt")]] = parser.get_examples(f.read())
    return pages


def example_keys(page, examples):
    """Each example's line in the known-failures list: `page :: source`, with the page written
    page[n] for the n-th example of the same source, and the source's newlines as \\n."""
    seen, keys = {}, []
    for ex in examples:
        source = ex.source.rstrip("\n").replace("\\", "\\\\").replace("\n", "\\n")
        seen[source] = seen.get(source, 0) + 1
        n = seen[source]
        keys.append("%s%s :: %s" % (page, "[%d]" % n if n > 1 else "", source))
    return keys


def load_known_failures(path=KNOWN_FAILURES):
    """The set of lines of a known-failures list, comments and blank lines aside."""
    with open(path) as f:
        return {line.rstrip("\n") for line in f if line.strip() and not line.startswith("#")}


PAGES = load_pages()
KEYS = {page: example_keys(page, examples) for page, examples in PAGES.items()}
CASES = [(page, i) for page, examples in PAGES.items() for i in range(len(examples))]


def kiln_source(source):
    """An example's source with Aesara's imports turned into Kiln's."""
    for pattern, replacement in IMPORTS:
        source = pattern.sub(replacement, source)
    return source


class _Checker(doctest.OutputChecker):
    """doctest's OutputChecker, blind to the module path in aesara/kiln class reprs."""

    def check_output(self, want, got, optionflags):
        """Compares as doctest does, after normalizing class reprs on both sides."""
        return super().check_output(CLASS_REPR.sub(r"<class '...\1'>", want),
                                    CLASS_REPR.sub(r"<class '...\1'>", got), optionflags)


class _Recorder(doctest.DocTestRunner):
    """A DocTestRunner that records (passed, what Kiln printed) per example instead of
    printing a report."""

    def __init__(self):
        super().__init__(checker=_Checker(), verbose=False)
        self.outcomes = []

    def report_start(self, out, test, example):
        """Says nothing."""

    def report_success(self, out, test, example, got):
        """Records a pass."""
        self.outcomes.append((True, got))

    def report_failure(self, out, test, example, got):
        """Records output that differs from Aesara's (a traceback cut to its message)."""
        head, sep, tail = got.partition("Traceback (most recent call last):\n")
        lines = tail.splitlines(True)
        message = next((i for i, line in enumerate(lines) if not line.startswith(" ")), 0)
        self.outcomes.append((False, head + sep + ("  ...\n" if sep else "")
                              + "".join(lines[message:])))

    def report_unexpected_exception(self, out, test, example, exc_info):
        """Records an exception Aesara did not raise, and where Kiln raised it."""
        frame = traceback.extract_tb(exc_info[2])[-1]
        self.outcomes.append((False, "".join(traceback.format_exception_only(*exc_info[:2]))
                              + "  (raised at %s:%d in %s)\n"
                              % (frame.filename, frame.lineno, frame.name)))


def run_examples(examples, name, path, rewrite, seed=SEED, floatx=FLOATX):
    """Runs a transcript's examples in one namespace on Kiln, their source first rewritten by
    `rewrite` (the peer's imports made Kiln's): [(passed, got)] in example order."""
    import kiln
    examples = [doctest.Example(rewrite(ex.source), ex.want, ex.exc_msg, ex.lineno,
                                ex.indent, ex.options) for ex in examples]
    test = doctest.DocTest(examples, {"__name__": "__main__"}, name, path, 0, None)
    np.random.seed(seed)
    saved = kiln.config.floatX, kiln.config.timeout
    kiln.config.floatX, kiln.config.timeout = floatx, 120
    try:
        runner = _Recorder()
        runner.run(test, out=lambda text: None)
    finally:
        kiln.config.floatX, kiln.config.timeout = saved
    assert len(runner.outcomes) == len(examples)
    return runner.outcomes


def run_page(page):
    """Runs one page's examples in one namespace on Kiln: [(passed, got)] in example order."""
    return run_examples(PAGES[page], page, os.path.join(GOLDEN, page + ".txt"), kiln_source)


class Summary:
    """A pytest plugin printing, at the end of the run, one line per transcript that ran:
    "<label> <transcript>: N examples, P pass, F known failures" (and any surprises)."""

    def __init__(self, label, keys, results, known):
        self.label, self.keys, self.results, self.known = label, keys, results, known

    def pytest_terminal_summary(self, terminalreporter):
        for name, keys in self.keys.items():
            if name not in self.results:
                continue
            listed = [key in self.known for key in keys]
            passed = [ok for ok, _ in self.results[name]]
            counts = [sum(p for p in passed), sum(not p and k for p, k in zip(passed, listed)),
                      sum(not p and not k for p, k in zip(passed, listed)),
                      sum(p and k for p, k in zip(passed, listed))]
            line = "%s %s: %d examples, %d pass, %d known failures" % (
                self.label, name, len(passed), counts[0], counts[1])
            if counts[2] or counts[3]:
                line += ", %d new failures, %d listed but passing" % (counts[2], counts[3])
            terminalreporter.write_line(line)


@pytest.fixture(scope="module")
def known_failures():
    """The examples listed as failing on Kiln today."""
    return load_known_failures()


@pytest.fixture(scope="module")
def page_outcomes(server, request, known_failures):
    """page -> [(passed, got)], each page run once on the test session's kiln-server."""
    results = {}
    request.config.pluginmanager.register(Summary("aesara docs", KEYS, results, known_failures))

    def outcomes(page):
        if page not in results:
            results[page] = run_page(page)
        return results[page]
    return outcomes


def describe(ex, where, expected_by, got):
    """A failing example as doctest reports one: where (a transcript and line), the source, the
    peer's output (`expected_by` names the peer) and Kiln's."""
    source = "".join((">>> " if i == 0 else "... ") + line + "\n"
                     for i, line in enumerate(ex.source.rstrip("\n").split("\n")))
    return ("%s line %d\n%sExpected (%s):\n%sGot (Kiln):\n%s"
            % (where, ex.lineno + 1, source, expected_by, _indent(ex.want), _indent(got)))


def _describe(page, index, got):
    """A failing example of an Aesara page."""
    return describe(PAGES[page][index], "tests/golden/aesara_docs/%s.txt" % page,
                    "Aesara 2.9.4", got)


def _indent(text):
    """Text indented by four spaces, or a note that it is empty."""
    return "".join("    " + line + "\n" for line in text.splitlines()) or "    (nothing)\n"


def check_example(passed, got, key, known_failures, failures_file, describe_failure):
    """Passes an example that printed what the peer printed, xfails one listed in failures_file,
    and fails the rest: an unlisted failure (described by describe_failure()) or a listed pass."""
    if key in known_failures:
        if passed:
            pytest.fail("passes on Kiln now: delete this line from %s:\n%s" % (failures_file, key),
                        pytrace=False)
        pytest.xfail((got.strip().splitlines() or ["no output"])[-1][:200])
    if not passed:
        pytest.fail(describe_failure(), pytrace=False)


def check_known_failures(known_failures, keys, golden_dir):
    """Every line of a known-failures list names an example of the transcripts in golden_dir."""
    stale = sorted(known_failures - {key for names in keys.values() for key in names})
    if stale:
        pytest.fail("not an example of %s:\n%s" % (golden_dir, "\n".join(stale)), pytrace=False)


@pytest.mark.parametrize("page,index", CASES,
                         ids=["%s:%d" % (p, PAGES[p][i].lineno + 1) for p, i in CASES])
def test_aesara_doc_example(page_outcomes, known_failures, page, index):
    """One documentation example prints on Kiln what it printed on Aesara (or is listed)."""
    passed, got = page_outcomes(page)[index]
    check_example(passed, got, KEYS[page][index], known_failures,
                  "tests/python/aesara_docs_known_failures.txt",
                  lambda: _describe(page, index, got))


def test_known_failures_are_examples(known_failures):
    """Every line of the known-failures list names an example of a transcript."""
    check_known_failures(known_failures, KEYS, "tests/golden/aesara_docs")