#!/usr/bin/python3
"""Writes tests/golden/peer_docs/<peer>-<source>.txt: the examples of Aesara's and PyTensor's
documentation for linear algebra, special functions, einsum and vectorize (doc pages and
docstrings), with the output the peer really printed, for tests/python/test_peer_docs.py.

    . /tmp/pytensor-oracle/env.sh; cd /tmp; /usr/bin/python3 <repo>/tests/golden/gen_peer_docs.py
    . /tmp/aesara-oracle/env.sh;   cd /tmp; /usr/bin/python3 <repo>/tests/golden/gen_peer_docs.py

(the peer is whichever of aesara/pytensor imports; Aesara tag rel-2.9.4, PyTensor rel-2.34.0.)

The transcripts have the format of tests/golden/aesara_docs (gen_aesara_docs.py): a header, then
`>>>` examples with the peer's output, run in order in one namespace after
numpy.random.seed(SEED) and floatX = FLOATX. Besides doctest's `>>>` examples, the examples of
Sphinx's `.. testcode::` and `.. code-block:: python` blocks are taken too, one example per
top-level statement (comments between statements dropped). Only example code lines are kept,
never prose. A few fixes make broken doc examples run (FIXES), and a few added lines print the
shape or value of what an example builds but does not print (PROBES); the header lists both,
and every dropped example with its reason."""
import ast
import doctest
import importlib
import importlib.util
import os
import re
import textwrap

import numpy

from doc_examples import add_ellipsis, execute, prompt, want_text

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "peer_docs")
SEED = 1234
FLOATX = "float64"
# Per peer: the imports its docs assume (run first), its doc pages (under doc/; page#Title:
# only that section), and the modules whose docstrings are taken (all examples of the module,
# or only the named objects').
SOURCES = {
    "aesara": {
        "setup": ["import numpy as np", "import aesara", "import aesara.tensor as at"],
        "pages": ["reference/tensor/operations.linalg.rst"],
        "modules": [("aesara.tensor.nlinalg", None), ("aesara.tensor.slinalg", None),
                    ("aesara.scalar.math", None), ("aesara.tensor.math", ["tensordot"])],
    },
    "pytensor": {
        "setup": ["import numpy as np", "import pytensor", "import pytensor.tensor as pt"],
        "pages": ["tutorial/gradients.rst", "library/tensor/basic.rst#Linear Algebra"],
        "modules": [("pytensor.tensor.einsum", None), ("pytensor.tensor.functional", None),
                    ("pytensor.graph.replace", None), ("pytensor.tensor.blockwise", None),
                    ("pytensor.tensor.linalg", None), ("pytensor.tensor.nlinalg", None),
                    ("pytensor.tensor.slinalg", None), ("pytensor.tensor.special", None),
                    ("pytensor.scalar.math", None),
                    ("pytensor.tensor.math", ["erf", "erfc", "tensordot", "vecdot", "matvec",
                                              "vecmat"])],
    },
}
# (source, old, new, why): textual fixes (regular expressions) of doc examples that cannot run
# as printed.
FIXES = [
    ("pytensor.tensor.einsum", "import pytensor as pt", "import pytensor.tensor as pt",
     "`import pytensor as pt` has no matrix/tensor/einsum: pytensor.tensor meant"),
    ("pytensor.tensor.einsum", '""bchwkt', '"bchwkt', "a doubled quote in the subscripts"),
    ("pytensor.tensor.slinalg", re.escape("result = block_diagonal(A, B, name='X')"),
     "result = block_diag(A, B)", "block_diagonal is block_diag, which takes no name"),
    ("pytensor.tensor.slinalg", r"\.\.code-block:: python", ".. code-block:: python",
     "a missing space in the directive"),
    ("pytensor.tensor.slinalg", r"\n *Out: array\(\[\[1, 2, 0, 0\],(\n *\[.*\],?)+\)", "",
     "the expected output written as code"),
]
# (source, statement, [lines]): lines added after a statement that builds without printing.
PROBES = [
    ("pytensor.tensor.einsum", 'C = pt.einsum("ij, jk -> ik", A, B)',
     ["C.eval({A: np.arange(6.0).reshape(2, 3), B: np.arange(12.0).reshape(3, 4)})"]),
    ("pytensor.tensor.einsum", 'C = pt.einsum("bij, bjk -> bik", A, B)',
     ["C.type.shape",
      "C.eval({A: np.arange(40.0).reshape(2, 4, 5), B: np.arange(60.0).reshape(2, 5, 6)})"
      ".sum(axis=(1, 2))"]),
    ("pytensor.tensor.einsum", 'C = pt.einsum("i...j, j...k -> ...ik", A, B)',
     ["C.type.shape",
      "C.eval({A: np.arange(120.0).reshape(4, 2, 1, 3, 5),"
      " B: np.arange(180.0).reshape(5, 2, 1, 3, 6) % 7}).sum(axis=(-2, -1))"]),
    ("pytensor.tensor.einsum", 'z = pt.einsum("i, j -> ij", x, y)',
     ["z.type.shape", "z.eval({x: np.arange(3.0), y: np.arange(4.0) + 1})"]),
    ("pytensor.tensor.einsum", 'y = pt.einsum("bchwkt,fckt->bfhw", x, w)',
     ["y.type.ndim",
      "y.eval({x: np.arange(32.0).reshape(1, 2, 2, 2, 2, 2) % 5,"
      " w: np.arange(16.0).reshape(2, 2, 2, 2) % 3})"]),
    ("pytensor.tensor.math", "z = pt.vecdot(x, y)  # scalar output",
     ["z.type.shape", "z.eval({x: np.arange(5.0), y: np.arange(5.0) + 1})"]),
    ("pytensor.tensor.math", "z_batch = pt.vecdot(x_batch, y_batch)  # shape (3,)",
     ["z_batch.type.shape",
      "z_batch.eval({x_batch: np.arange(15.0).reshape(3, 5), y_batch: np.ones((3, 5))})"]),
    ("pytensor.tensor.math", "result = pt.matvec(A, v)  # shape (3,)",
     ["result.type.shape",
      "result.eval({A: np.arange(12.0).reshape(3, 4), v: np.arange(4.0)})"]),
    ("pytensor.tensor.math", "result_batched = pt.matvec(batched_A, batched_v)  # shape (2, 3)",
     ["result_batched.type.shape",
      "result_batched.eval({batched_A: np.arange(24.0).reshape(2, 3, 4),"
      " batched_v: np.arange(8.0).reshape(2, 4)})"]),
    ("pytensor.tensor.math", "result = pt.vecmat(v, A)  # shape (4,)",
     ["result.type.shape",
      "result.eval({v: np.arange(3.0), A: np.arange(12.0).reshape(3, 4)})"]),
    ("pytensor.tensor.math", "result_batched = pt.vecmat(batched_v, batched_A)  # shape (2, 4)",
     ["result_batched.type.shape",
      "result_batched.eval({batched_v: np.arange(6.0).reshape(2, 3),"
      " batched_A: np.arange(24.0).reshape(2, 3, 4)})"]),
]
ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{4,}\b")
TRACEBACK = "Traceback (most recent call last):\n  ...\n"
# A Sphinx block whose body is code: `.. testcode::` or `.. code-block:: python`; and the
# `.. testoutput::` that may follow a testcode.
CODE = re.compile(r"^(\s*)\.\. (testcode|code-block|code)::\s*(python|py|\S*)?\s*$")
OUTPUT = re.compile(r"^(\s*)\.\. testoutput::")


def directive_body(lines, i, indent):
    """(body text dedented, index after it) of the directive at lines[i] (options skipped)."""
    j = i + 1
    body = []
    while j < len(lines) and (not lines[j].strip()
                              or len(lines[j]) - len(lines[j].lstrip()) > len(indent)):
        body.append(lines[j])
        j += 1
    while body and not body[-1].strip():
        body.pop()
    text = textwrap.dedent("\n".join(body))
    text = "\n".join(line for line in text.split("\n") if not re.match(r"^:\w[\w-]*:", line))
    return text.strip("\n") + "\n", j


def statements(code, lineno):
    """doctest.Examples, one per top-level statement of a code block (comments dropped)."""
    tree = ast.parse(code)
    lines = code.split("\n")
    return [doctest.Example("\n".join(lines[node.lineno - 1:node.end_lineno]) + "\n", "",
                            lineno=lineno + node.lineno) for node in tree.body]


def examples_of(text):
    """[(first line, [Example], doc's output of the block or None)] in the text's order."""
    units, end = [], None
    for ex in doctest.DocTestParser().get_examples(text):
        if units and ex.lineno == end:  # the next line of the same block
            units[-1][1].append(ex)
        else:
            units.append((ex.lineno, [ex], None))
        end = ex.lineno + ex.source.count("\n") + ex.want.count("\n")
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = CODE.match(lines[i])
        if m and (m.group(2) == "testcode" or m.group(3) in ("python", "py")):
            code, j = directive_body(lines, i, m.group(1))
            if code.lstrip().startswith(">>>"):  # doctest's parser has its examples
                i = j
                continue
            want, k = None, j
            while k < len(lines) and not lines[k].strip():
                k += 1
            if m.group(2) == "testcode" and k < len(lines) and OUTPUT.match(lines[k]):
                want, j = directive_body(lines, k, OUTPUT.match(lines[k]).group(1))
            units.append((i, statements(code, i + 1), want))
            i = j
        else:
            i += 1
    return sorted(units, key=lambda unit: unit[0])


def record(example, globs):
    """Runs an example; returns (source, want) to keep, or (None, reason) to drop it."""
    got, exc = execute(example.source, globs)
    if (exc is None) != (example.exc_msg is None):
        return None, ("raised " + exc.strip().splitlines()[0] if exc
                      else "the doc expects an exception; the peer raised none")
    actual = got if exc is None else TRACEBACK + exc
    flags = sum(flag for flag, on in example.options.items() if on)
    if example.options.get(doctest.ELLIPSIS) and doctest.OutputChecker().check_output(
            example.want, actual, flags):
        return example.source, example.want
    source = example.source
    if ADDRESS.search(actual):
        actual = ADDRESS.sub("0x...", actual)
        if not example.options.get(doctest.ELLIPSIS):
            source = add_ellipsis(source)
    return source, actual


def fixed(source, text, notes):
    """The text with this source's FIXES applied (each applied fix noted)."""
    for where, old, new, why in FIXES:
        if where == source and re.search(old, text):
            text = re.sub(old, lambda m: new, text)
            notes.append("fixed /%s/ -> %r (%s)" % (old.strip()[:60], new.strip()[:60], why))
    return text


def docstrings(module_name, names):
    """[(qualified name, line, docstring)] of a module's functions and classes (and methods),
    in source order, only those named if names is given."""
    module = importlib.import_module(module_name)
    with open(module.__file__) as f:
        tree = ast.parse(f.read())
    found = []

    def visit(body, prefix):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node, clean=True)
                if doc and (names is None or node.name in names):
                    found.append((prefix + node.name, node.lineno, doc))
                if isinstance(node, ast.ClassDef):
                    visit(node.body, prefix + node.name + ".")
    visit(tree.body, "")
    return found


def transcript(peer, source, texts):
    """The transcript of one source (a doc page or a module's docstrings): header + examples.
    texts: [(label, text)]. Returns (text, examples found, examples kept)."""
    cfg = SOURCES[peer]
    numpy.random.seed(SEED)
    set_floatx(peer)
    globs = {"__name__": "__main__"}
    for line in cfg["setup"]:
        got, exc = execute(line + "\n", globs)
        assert not got and not exc, (line, got, exc)
    body = ["".join(prompt(line) for line in cfg["setup"])]
    notes, found, kept = [], 0, 0
    for label, text in texts:
        local = []
        text = fixed(source, text, local)
        for lineno, examples, doc_want in examples_of(text):
            found += len(examples)
            body.append("\n")
            outputs = []
            for ex in examples:
                where = "%s line %d: %s" % (label, ex.lineno + 1,
                                            ex.source.strip().splitlines()[0][:70])
                if ex.options.get(doctest.SKIP):
                    notes.append("%s (+SKIP in the doc)" % where)
                    continue
                src, want = record(ex, globs)
                if src is None:
                    notes.append("%s (%s)" % (where, want))
                    continue
                kept += 1
                outputs.append(want)
                if src != ex.source:
                    notes.append("%s (+ELLIPSIS added: a memory address)" % where)
                elif ex.want and want != ex.want:
                    notes.append("%s (%s's output differs from the doc's)" % (where, peer))
                body.append(prompt(src) + want_text(want))
                for probe in next((lines for s, stmt, lines in PROBES
                                   if s == source and stmt == ex.source.strip()), []):
                    got, exc = execute(probe + "\n", globs)
                    assert not exc, (probe, exc)
                    notes.append("%s: added `%s`" % (where, probe[:70]))
                    body.append(prompt(probe) + want_text(got))
            if doc_want is not None and " ".join("".join(outputs).split()) != " ".join(
                    doc_want.split()):
                notes.append("%s line %d: the block's output differs from the doc's "
                             "testoutput" % (label, lineno + 1))
        notes.extend("%s: %s" % (label, n) for n in local)
    module = importlib.import_module(peer)
    header = ("%s %s documentation examples from %s, with the output %s printed, written by "
              "tests/golden/gen_peer_docs.py. The examples run in order in one namespace "
              "after numpy.random.seed(%d) and %s.config.floatX = %r, and after the first "
              "%d examples, which are not the doc's but the imports its prose assumes; "
              "tests/python/test_peer_docs.py runs them on Kiln.\n"
              % (peer.capitalize().replace("Pytensor", "PyTensor"), module.__version__, source,
                 peer, SEED, peer, FLOATX, len(cfg["setup"])))
    if notes:
        header += "\nDropped, changed or added:\n" + "".join("  %s\n" % n for n in notes)
    return header + "\n" + "".join(body), found, kept


def section(text, title):
    """The text with every line outside the section `title` blanked (line numbers kept): from
    its heading to the next heading underlined with the same character."""
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines[:-1])
                 if line.strip() == title and re.fullmatch(r"([=\-~^])\1+", lines[i + 1]))
    mark = lines[start + 1][0]
    end = next((i for i in range(start + 2, len(lines) - 1)
                if lines[i].strip() and re.fullmatch(re.escape(mark) + "+", lines[i + 1])),
               len(lines))
    return "\n".join(line if start <= i < end else "" for i, line in enumerate(lines))


def set_floatx(peer):
    """Sets the peer's floatX to FLOATX."""
    importlib.import_module(peer).config.floatX = FLOATX


def main():
    """Writes a transcript for every doc page and module of the importable peer that has
    examples."""
    peer = "pytensor" if importlib.util.find_spec("pytensor") else "aesara"
    module = importlib.import_module(peer)
    doc = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(module.__file__))),
                       "doc")
    os.makedirs(OUT, exist_ok=True)
    jobs = []
    for page in SOURCES[peer]["pages"]:
        path, _, title = page.partition("#")
        with open(os.path.join(doc, path)) as f:
            text = f.read()
        jobs.append(("doc/" + page, [("doc/" + path, section(text, title) if title else text)]))
    for name, names in SOURCES[peer]["modules"]:
        jobs.append((name, [("%s.%s (line %d)" % (name, qual, line), text)
                            for qual, line, text in docstrings(name, names)]))
    for source, texts in jobs:
        text, found, kept = transcript(peer, source, texts)
        name = "%s-%s" % (peer, re.sub(r"\.rst(#|$)", r"\1", source).replace("/", "-")
                          .replace("#", ".").replace(" ", "_").lower())
        if not found:
            print("%s: no examples" % name)
            continue
        with open(os.path.join(OUT, name + ".txt"), "w") as f:
            f.write(text)
        print("%s: %d examples, %d kept" % (name, found, kept))


if __name__ == "__main__":
    main()
