"""dprint's options and pydotprint's pictures (graphviz draws the server's DOT)."""
import kiln
import kiln.tensor as kt
from kiln import printing


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
