"""kiln.dprint and kiln.printing.pydotprint: Aesara's debugprint text (core's dprint of the
graph's twin in kiln._core), and its picture drawn from the server's DOT by graphviz."""
import subprocess
import sys

from kiln import _pb, wire
from kiln.graph import _core, core_variable, graph_inputs
from kiln.tensor.variable import TensorConstant


def debugprint(obj, file=None, depth=-1, print_type=False, ids="CHAR", stop_on_name=False,
               done=None, max_nesting=100):
    """Prints the graph of a variable, a list of variables or a compiled function (its
    optimized graph, as the server prints it) to `file` (sys.stdout by default) and returns
    the file, or returns the text with file='str'. A subtree nested deeper
    than max_nesting levels ends its line with " ..." and is printed as a block of its own
    below, so that the text stays linear in the graph's size (-1: never cut)."""
    from kiln.compile import Function
    if isinstance(obj, Function):
        req = _pb.service_pb2.PrintRequest(function_id=obj.function_id)
        text = obj._client.call("Print", req).text
    else:
        outs = list(obj) if isinstance(obj, (list, tuple)) else [obj]
        text = _debugprint(outs, depth, print_type, ids, stop_on_name, max_nesting)
    if file == "str":
        return text
    file = file or sys.stdout
    file.write(text)
    return file


def _debugprint(outputs, depth, print_type, ids, stop_on_name, max_nesting):
    return _core.dprint([core_variable(o) for o in outputs], print_type, ids, depth,
                        stop_on_name, max_nesting)


dprint = debugprint


def pydotprint(fct, outfile=None, format="png", compact=True, var_with_name_simple=False,
               print_output_file=True, **kwargs):
    """Draws a variable's graph, or a compiled function's optimized graph, with graphviz (the
    server writes the DOT in pydotprint's conventions)."""
    from kiln.client import get_client
    from kiln.compile import Function
    req = _pb.service_pb2.PrintRequest(format=_pb.service_pb2.PrintRequest.DOT)
    if isinstance(fct, Function):
        req.function_id = fct.function_id
        client = fct._client
    else:
        outs = list(fct) if isinstance(fct, (list, tuple)) else [fct]
        leaves = [v for v in graph_inputs(outs) if not isinstance(v, TensorConstant)]
        req.graph.CopyFrom(wire.graph_to_proto(leaves, outs))
        client = get_client()
    dot = client.call("Print", req).text
    outfile = outfile or "kiln.%s" % format
    if format == "dot":
        with open(outfile, "w") as f:
            f.write(dot)
    else:
        subprocess.run(["dot", "-T" + format, "-o", outfile], input=dot.encode(), check=True)
    if print_output_file:
        print("The output file is available at", outfile)
    return outfile
