"""kiln.dprint and kiln.printing.pydotprint: Aesara's debugprint text, and its picture drawn
from the server's DOT by graphviz."""
import collections
import subprocess
import sys

from kiln import _pb, wire
from kiln.graph import graph_inputs
from kiln.tensor.variable import TensorConstant


def char_id(n):
    """A, B, ..., Z, BA, BB...: Aesara's ids."""
    if n == 0:
        return "A"
    out = ""
    while n:
        out = chr(ord("A") + n % 26) + out
        n //= 26
    return out


def debugprint(obj, file=None, depth=-1, print_type=False, ids="CHAR", stop_on_name=False,
               done=None, max_nesting=100):
    """Prints (or returns, with file='str') the graph of a variable, a list of variables or a
    compiled function (its optimized graph, as the server prints it). A subtree nested deeper
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
    (file or sys.stdout).write(text)
    return file


def _debugprint(outputs, depth, print_type, ids, stop_on_name, max_nesting):
    given, lines = {}, []

    def id_text(key):
        if ids == "":
            return ""
        if key not in given:
            given[key] = len(given)
        n = given[key]
        return " [id %s]" % (char_id(n) if ids == "CHAR" else n)

    def type_text(v):
        return " <%s>" % v.type if print_type else ""

    def tree(root, expand_seen, cut):
        stack = [(root, "", "", 0)]
        while stack:
            v, prefix, child_prefix, level = stack.pop()
            node = v.owner
            if node is None:
                lines.append("%s%s%s%s" % (prefix, v, id_text(id(v)), type_text(v)))
                continue
            seen = id(node) in given and not (expand_seen and level == 0)
            stop = seen or (depth >= 0 and level + 1 >= depth) or (
                stop_on_name and v.name and level > 0)
            cut_here = (not stop and max_nesting >= 0 and level >= max_nesting
                        and len(node.inputs) > 0)
            lines.append("%s%s%s%s%s%s%s" % (
                prefix, node.op, ".%d" % v.index if len(node.outputs) > 1 else "",
                id_text(id(node)), type_text(v), " '%s'" % v.name if v.name else "",
                " ..." if cut_here else ""))
            if cut_here:
                cut.append(v)
            if stop or cut_here:
                continue
            n = len(node.inputs)
            for i in range(n - 1, -1, -1):
                last = i == n - 1
                stack.append((node.inputs[i], child_prefix + " |",
                              child_prefix + ("  " if last else " |"), level + 1))

    for root in outputs:
        cut = collections.deque()
        tree(root, False, cut)
        while cut:
            tree(cut.popleft(), True, cut)
    return "".join(line + "\n" for line in lines)


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
