"""kiln.graph.fg (Aesara's aesara.graph.fg): FunctionGraph as a view to inspect a graph
(inputs, outputs, apply_nodes, variables, clients, toposort), built from the Python graph.
Kiln's own FunctionGraph, the one rewrites edit, is core's, on the server: compiling never
needs this one, and it runs no rewrite (kiln.dprint(f) shows what the server made)."""
from kiln.graph import Apply, Constant, Variable, graph_inputs  # noqa: F401
from kiln.graph.basic import (applys_between, clone_get_equiv, clone_replace,  # noqa: F401
                              io_toposort, vars_between)
from kiln.graph.standin import REWRITES, unsupported_class
from kiln.graph.utils import InconsistencyError, MissingInputError  # noqa: F401

__all__ = ["FunctionGraph", "MissingInputError", "Feature", "ReplaceValidate", "AlreadyThere"]


class AlreadyThere(Exception):
    """A feature attached twice (Aesara's)."""


Feature = unsupported_class("Feature", REWRITES)
ReplaceValidate = unsupported_class("ReplaceValidate", REWRITES)


class FunctionGraph:
    """The graph from inputs to outputs: a copy of the caller's graph by default (clone=True,
    as Aesara), so that replace() leaves the caller's graph as it was. inputs defaults to the
    outputs' non-constant leaves; a leaf needed but not among inputs is MissingInputError."""

    def __init__(self, inputs=None, outputs=None, features=None, clone=True,
                 update_mapping=None, **kwargs):
        if outputs is None:
            raise ValueError("No outputs specified")
        outputs = list(outputs)
        if inputs is None:
            inputs = [v for v in graph_inputs(outputs) if not isinstance(v, Constant)]
        inputs = list(inputs)
        if features:
            raise NotImplementedError("FunctionGraph: features are not available in Kiln: %s."
                                      % REWRITES)
        if clone:
            equiv = clone_get_equiv(inputs, outputs, copy_inputs=True, copy_orphans=False)
            inputs = [equiv[i] for i in inputs]
            outputs = [equiv[o] for o in outputs]
        self.inputs = inputs
        self.outputs = outputs
        self.update_mapping = update_mapping
        self.features = []
        self._rebuild()

    def _rebuild(self):
        """The nodes, variables and clients of the graph from inputs to outputs."""
        given = {id(i) for i in self.inputs}
        for k, v in enumerate(graph_inputs(self.outputs, self.inputs)):
            if id(v) not in given and not isinstance(v, Constant) \
                    and not hasattr(v, "get_value"):
                raise MissingInputError(
                    "Input %d (%s) of the graph (indices start from 0), used to compute %s, "
                    "was not provided and not given a value." % (k, v, self.outputs[0]),
                    variable=v)
        self._toposort = io_toposort(self.inputs, self.outputs)
        self.apply_nodes = set(self._toposort)
        variables = list(self.inputs)
        seen = {id(v) for v in variables}
        for node in self._toposort:
            for v in node.inputs + node.outputs:
                if id(v) not in seen:
                    seen.add(id(v))
                    variables.append(v)
        for v in self.outputs:
            if id(v) not in seen:
                seen.add(id(v))
                variables.append(v)
        self.variables = set(variables)
        self.clients = {v: [] for v in variables}
        for node in self._toposort:
            for k, i in enumerate(node.inputs):
                self.clients[i].append((node, k))
        for k, o in enumerate(self.outputs):
            self.clients[o].append(("output", k))

    def toposort(self):
        """The Apply nodes, each after the nodes computing its inputs."""
        return list(self._toposort)

    def orderings(self):
        """Extra ordering constraints: none in Kiln."""
        return {}

    def get_clients(self, var):
        """[(node or "output", input index)] of the uses of var."""
        return self.clients[var]

    def check_integrity(self):
        """Checks that the nodes and clients agree with the graph (they are rebuilt from it)."""
        for node in self._toposort:
            for k, i in enumerate(node.inputs):
                if (node, k) not in self.clients[i]:
                    raise Exception("Inconsistent clients list %s for %s" % ((node, k), i))

    def replace(self, var, new_var, reason=None, verbose=None, import_missing=False):
        """Replaces var by new_var in the outputs (a copy of the part of the graph above var:
        Kiln's nodes are not edited in place)."""
        self.replace_all([(var, new_var)], reason=reason, verbose=verbose,
                         import_missing=import_missing)

    def replace_all(self, pairs, **kwargs):
        """Replaces each var of (var, new_var) pairs."""
        pairs = list(pairs)
        for var, new in pairs:
            if var.type != new.type and not var.type.is_super(new.type):
                raise TypeError("The type of the replacement (%s) must be compatible with the "
                                "type of the original Variable (%s)." % (new.type, var.type))
        self.outputs = clone_replace(self.outputs, pairs)
        self._rebuild()

    def add_output(self, var, reason=None, import_missing=False):
        """Adds var to the outputs."""
        self.outputs.append(var)
        self._rebuild()

    def attach_feature(self, feature):
        raise NotImplementedError("FunctionGraph.attach_feature is not available in Kiln: %s."
                                  % REWRITES)

    def clone(self, check_integrity=True):
        """A copy of this graph."""
        return FunctionGraph(self.inputs, self.outputs, clone=True)

    def clone_get_equiv(self, check_integrity=True, attach_feature=True):
        """(a copy of this graph, {old: new})."""
        equiv = clone_get_equiv(self.inputs, self.outputs)
        fg = FunctionGraph([equiv[i] for i in self.inputs], [equiv[o] for o in self.outputs],
                           clone=False)
        return fg, equiv

    def __contains__(self, item):
        if isinstance(item, Apply):
            return item in self.apply_nodes
        return item in self.variables

    def __str__(self):
        """Aesara's: FunctionGraph(Elemwise{mul,no_inplace}(Elemwise{add,no_inplace}(x, y), z))."""
        inputs = {id(i) for i in self.inputs}

        def expr(v):
            if v.owner is None or id(v) in inputs:
                return str(v)
            return "%s(%s)" % (v.owner.op, ", ".join(expr(i) for i in v.owner.inputs))
        return "FunctionGraph(%s)" % ", ".join(expr(o) for o in self.outputs)

    __repr__ = __str__
