"""dprint, pp and Print, and pydotprint's pictures (graphviz draws the server's DOT)."""
import os

import numpy as np
import pytest

import kiln
import kiln.tensor as kt
from kiln import printing

from conftest import running_server


def test_dprint_with_types_and_shared_nodes():
    a = kt.vector("a")
    b = a + a ** 10
    assert kiln.dprint(b, file="str", print_type=True) == (
        "Elemwise{add,no_inplace} [id A] <TensorType(float64, (?,))>\n"
        " |a [id B] <TensorType(float64, (?,))>\n"
        " |Elemwise{pow,no_inplace} [id C] <TensorType(float64, (?,))>\n"
        "   |a [id B] <TensorType(float64, (?,))>\n"
        "   |InplaceDimShuffle{x} [id D] <TensorType(int8, (1,))>\n"
        "     |TensorConstant{10} [id E] <TensorType(int8, ())>\n")
    e = kt.exp(a)
    assert kiln.dprint([e * e], file="str") == (
        "Elemwise{mul,no_inplace} [id A]\n"
        " |Elemwise{exp,no_inplace} [id B]\n"
        " | |a [id C]\n"
        " |Elemwise{exp,no_inplace} [id B]\n")
    assert kiln.dprint(e * e, file="str", depth=1) == "Elemwise{mul,no_inplace} [id A]\n"


def test_pydotprint_draws_a_graph_and_a_function(server, tmp_path):
    a = kt.vector("a")
    b = a + a ** 10
    png = printing.pydotprint(b, outfile=str(tmp_path / "b.png"), print_output_file=False)
    with open(png, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    f = kiln.function([a], b)
    dot = printing.pydotprint(f, outfile=str(tmp_path / "f.dot"), format="dot",
                              print_output_file=False)
    with open(dot) as g:
        text = g.read()
    assert text.startswith("digraph") and "Composite" in text


# Where Kiln's pp deliberately differs from Aesara 2.9.4's: Aesara's Subtensor printer takes
# the index integers from the end of the inputs and prints a slice bound's type ("int64")
# rather than its value, so a[0, 1:3] reads "a[3, int64:int64]"; Kiln prints the index written.
PP_DIFFERENCES = {
    "a[0, 1:3]": "a[0, 1:3]",
    "a[:, ::2]": "a[:, ::2]",
    "a[-1:, 1]": "a[-1:, 1]",
    "at.inc_subtensor(a[1:, ::2], 1.0)": "inc_subtensor(a[1:, ::2], 1.0)",
    # Kiln builds some graphs with other ops than Aesara 2.9.4 builds before its rewrites: max
    # and argmax as Max and Argmax (not MaxAndArgmax), shapes by Shape_i; an integer among
    # advanced indices is an int64 constant (Aesara's TensorFromScalar of a ScalarConstant).
    "at.max(a)": "Max{maximum}(a)",
    "at.argmax(a, axis=0)": "Argmax{axis=(0,)}(a)",
    "at.mean(a)": "((sum(a, axis=None) / float64(Shape_i{0}(a))) / float64(Shape_i{1}(a)))",
    "a[i, 0]": "AdvancedSubtensor(a, i, 0)",
}


def pp_golden_cases():
    """(source, Aesara's pp text) of tests/golden/pp.txt (written by gen_pp.py)."""
    path = os.path.join(os.path.dirname(__file__), "..", "golden", "pp.txt")
    with open(path) as f:
        lines = [line.rstrip("\n") for line in f if not line.startswith("#") and line.strip()]
    return [(lines[k][len(">>> "):], lines[k + 1]) for k in range(0, len(lines), 2)]


@pytest.mark.parametrize("source,expected", pp_golden_cases())
def test_pp_prints_what_aesara_prints(source, expected):
    x, y, z = kt.dscalars("x", "y", "z")
    names = {"at": kt, "x": x, "y": y, "z": z, "a": kt.dmatrix("a"), "b": kt.dvector("b"),
             "i": kt.lvector("i")}
    assert kiln.pp(eval(source, names)) == PP_DIFFERENCES.get(source, expected)


def test_pp_of_a_huge_shared_expression_is_refused():
    v = kt.dscalar("x")
    for _ in range(64):
        v = v * v
    with pytest.raises(ValueError, match="pp: the expression's text exceeds 1048576"):
        kiln.pp(v)
    assert printing.pprint is printing.pp


def test_print_shows_a_value_the_server_computes(server, capsys):
    x = kt.dvector()
    hello = printing.Print("hello world")
    f = kiln.function([x], hello(x) * 2)
    assert str(hello).startswith(
        "Print{message='hello world', attrs=('__str__',), global_fn=<function _print_fn at 0x")
    np.testing.assert_array_equal(f([1, 2, 3]), [2., 4., 6.])
    assert capsys.readouterr().out == "hello world __str__ = [1. 2. 3.]\n"
    # Each call prints again; attributes are read from the value here, in the client.
    seen = []
    shapes = printing.Print("x", attrs=("shape", "sum"),
                            global_fn=lambda op, v: seen.append((op.message, v.shape)))
    g = kiln.function([x], [shapes(x).sum(), kt.grad(shapes(x).sum(), x)])
    for n in (2, 3):
        g(np.ones(n))
    assert seen == [("x", (2,)), ("x", (3,))]
    h = kiln.function([x], printing.Print("x", attrs=("shape", "sum"))(x))
    h([1., 2.])
    assert capsys.readouterr().out == "x shape = (2,)\nx sum = 3.0\n"


def test_print_in_an_update_and_past_the_servers_limit(server, capsys):
    acc = kiln.shared(np.zeros(2), name="acc")
    x = kt.dvector("x")
    step = kiln.function([x], [], updates=[(acc, printing.Print("acc")(acc + x))])
    step([1., 2.])
    step([1., 2.])
    assert capsys.readouterr().out == "acc __str__ = [1. 2.]\nacc __str__ = [2. 4.]\n"
    # A server keeps at most --max_printed_bytes of printed values per call; the client warns.
    with running_server("--max_printed_bytes=1000") as address:
        kiln.config.server = address
        try:
            f = kiln.function([x], printing.Print("b")(printing.Print("a")(x)))
            with pytest.warns(UserWarning, match="1 printed values were left out"):
                f([1., 2.])
        finally:
            kiln.config.server = server
    assert capsys.readouterr().out == "a __str__ = [1. 2.]\n"
