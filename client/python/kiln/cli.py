"""kiln: a command-line tool for a Kiln server.

  kiln compile -i x:dmatrix -i y:dmatrix 'x + y'      the function id, its source and signature
  kiln run -i a:vector 'a + a**10' --arg 'a=[0,1,2]'  compile and run, print the outputs
  kiln grad -i x:dvector 'kt.sum(x**2)' --wrt x       dprint of the gradient graph
  kiln print -i x:dmatrix 'x * 2.0' [--optimized] [--format dot]
  kiln stats                                          the server's counters

Graphs are Python expressions over the typed inputs (NAME:CONSTRUCTOR, e.g. x:dmatrix, with kt
for kiln.tensor), or a serialized kiln.v1.Graph with --graph FILE. --server (or KILN_SERVER)
says where the server is.
"""
import argparse
import json
import sys

import numpy as np


def _inputs(specs):
    import kiln.tensor as kt
    out = []
    for spec in specs:
        name, _, ctor = spec.partition(":")
        if not name or not hasattr(kt, ctor or "?"):
            raise SystemExit("kiln: bad input '%s': expected NAME:CONSTRUCTOR (x:dmatrix)" % spec)
        out.append(getattr(kt, ctor)(name))
    return out


def _expression(args, inputs):
    import kiln.tensor as kt
    env = {"kt": kt, "np": np}
    env.update({v.name: v for v in inputs})
    try:
        value = eval(args.expression, {"__builtins__": {}}, env)
    except Exception as e:  # the user's expression: report it, whatever it raised
        raise SystemExit("kiln: cannot build '%s': %s" % (args.expression, e))
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _function(args):
    import kiln
    from kiln import _pb
    from kiln.compile.mode import mode_options
    if args.graph:
        graph = _pb.graph_pb2.Graph()
        with open(args.graph, "rb") as f:
            graph.ParseFromString(f.read())
        mode, check = mode_options(args.mode)
        req = _pb.service_pb2.CompileRequest(graph=graph, mode=mode, check=check)
        resp = kiln.client.get_client().call("Compile", req)
        return resp.function_id, resp.source, resp.signature
    inputs = _inputs(args.input)
    f = kiln.function(inputs, _expression(args, inputs), mode=args.mode)
    return f.function_id, f.source, f.signature


def _type_text(t):
    from kiln import wire
    return str(wire.type_from_proto(t))


def cmd_compile(args):
    fid, source, sig = _function(args)
    print("function_id %s (%s)" % (fid, source))
    for i in sig.inputs:
        print("input  %s %s%s" % (i.name or "?", _type_text(i.type),
                                  " shared=%s" % i.shared if i.shared else ""))
    for t in sig.output_types:
        print("output %s" % _type_text(t))


def cmd_run(args):
    import kiln
    inputs = _inputs(args.input)
    f = kiln.function(inputs, _expression(args, inputs), mode=args.mode)
    values = {}
    for a in args.arg:
        name, _, text = a.partition("=")
        values[name] = json.loads(text)
    missing = [v.name for v in inputs if v.name not in values]
    if missing:
        raise SystemExit("kiln: no --arg for %s" % ", ".join(missing))
    for out in f(*[np.asarray(values[v.name], dtype=v.dtype) for v in inputs]):
        print(np.array2string(np.asarray(out), separator=", "))


def cmd_grad(args):
    import kiln
    inputs = _inputs(args.input)
    cost = _expression(args, inputs)[0]
    by_name = {v.name: v for v in inputs}
    wrt = [by_name[w] for w in args.wrt]
    for g in kiln.grad(cost, wrt):
        kiln.dprint(g)


def cmd_print(args):
    import kiln
    from kiln import _pb, wire
    inputs = _inputs(args.input)
    outputs = _expression(args, inputs)
    if args.optimized or args.format == "dot":
        req = _pb.service_pb2.PrintRequest(
            format=_pb.service_pb2.PrintRequest.DOT if args.format == "dot" else
            _pb.service_pb2.PrintRequest.DPRINT)
        if args.optimized:
            req.function_id = kiln.function(inputs, outputs, mode=args.mode).function_id
        else:
            wire.graph_to_proto(inputs, outputs, into=req.graph)
        sys.stdout.write(kiln.client.get_client().call("Print", req).text)
    else:
        kiln.dprint(outputs)


def cmd_stats(args):
    import kiln
    from kiln import _pb
    stats = kiln.client.get_client().call("GetStats", _pb.service_pb2.GetStatsRequest())
    for field, value in stats.ListFields():
        print("%s %s" % (field.name, value))
    version = kiln.client.get_client().server_version
    print("server %s at %s" % (version, kiln.config.server))


def main(argv=None):
    parser = argparse.ArgumentParser(prog="kiln", description=__doc__.split("\n")[0])
    parser.add_argument("--server", help="host:port of the Kiln server (KILN_SERVER)")
    parser.add_argument("--token", help="bearer token of the server's --auth_tokens (KILN_TOKEN)")
    parser.add_argument("--tls-ca", help="PEM CA of the server's certificate: TLS (KILN_TLS_CA)")
    parser.add_argument("--tls-cert", help="PEM client certificate, mutual TLS (KILN_TLS_CERT)")
    parser.add_argument("--tls-key", help="PEM key of --tls-cert (KILN_TLS_KEY)")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, fn in (("compile", cmd_compile), ("run", cmd_run), ("grad", cmd_grad),
                     ("print", cmd_print), ("stats", cmd_stats)):
        p = sub.add_parser(name)
        p.set_defaults(fn=fn)
        if name == "stats":
            continue
        p.add_argument("expression", nargs="?", help="a Python expression over the inputs")
        p.add_argument("-i", "--input", action="append", default=[],
                       help="an input NAME:CONSTRUCTOR (x:dmatrix); repeat for more")
        p.add_argument("--mode", help="FAST_RUN (default), FAST_COMPILE, NONE, NanGuardMode or "
                                      "DebugMode")
        if name == "compile":
            p.add_argument("--graph", help="a serialized kiln.v1.Graph instead of an expression")
        if name == "run":
            p.add_argument("--arg", action="append", default=[],
                           help="NAME=JSON, one per input")
        if name == "grad":
            p.add_argument("--wrt", action="append", required=True, help="an input's name")
        if name == "print":
            p.add_argument("--optimized", action="store_true",
                           help="the server's optimized graph of the compiled function")
            p.add_argument("--format", choices=("dprint", "dot"), default="dprint")
    args = parser.parse_args(argv)
    import kiln
    if args.server:
        kiln.config.server = args.server
    for name in ("token", "tls_ca", "tls_cert", "tls_key"):
        if getattr(args, name):
            setattr(kiln.config, name, getattr(args, name))
    if getattr(args, "expression", "") is None and not getattr(args, "graph", None):
        parser.error("%s needs an expression" % args.command)
    try:
        args.fn(args)
    except kiln.KilnError as e:
        raise SystemExit("kiln: %s" % e)
    return 0


if __name__ == "__main__":
    sys.exit(main())
