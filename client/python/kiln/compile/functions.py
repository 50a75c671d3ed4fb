"""kiln.function: Aesara's compiled functions, compiled by the server and run there or, with
execute="local", in this process."""
import sys

import numpy as np

from kiln import _pb, printing, wire
from kiln.config import config
from kiln.compile.io import Container, In, Out, as_in
from kiln.compile.mode import execute_of, mode_options
from kiln.compile.sharedvalue import SharedVariable
from kiln.errors import KilnError
from kiln.graph import Variable, _core, ancestors, clone_replace, core_variable, graph_inputs
from kiln.graph.utils import MissingInputError
from kiln.tensor.basic import as_tensor_variable
from kiln.sparse.type import is_scipy_sparse
from kiln.tensor.variable import SparseOperand, TensorConstant


# kiln.runners.make_runner, set when kiln.runners loads (kiln's __init__ loads it): where a
# Function's calls run, from above this layer.
make_runner = None


class FunctionMaker:
    """What Kiln has of Aesara's FunctionMaker: the function's inputs (In), outputs and fgraph,
    the graph the server compiled, fetched on first use (Compile with return_optimized) as a
    FunctionGraph over the function's input variables, the shared variables last."""

    def __init__(self, fn):
        self.function = fn
        self.inputs = fn.inputs
        self.outputs = fn.outputs
        self._fgraph = None

    @property
    def fgraph(self):
        """The optimized graph: a FunctionGraph of client variables."""
        if self._fgraph is None:
            from kiln.graph.fg import FunctionGraph
            fn = self.function
            req = _pb.service_pb2.CompileRequest()
            req.CopyFrom(fn._request)
            req.return_optimized, req.return_stored = True, False
            resp = fn._runner.call("Compile", req, route=fn._runner.route)
            variables = [i.variable for i in fn.inputs] + list(fn._shared)
            outputs = wire.graph_from_proto(resp.optimized, variables)
            self._fgraph = FunctionGraph(variables, outputs, clone=False)
        return self._fgraph


class Function:
    """A function compiled on the server. Call it with one value per input (positionally or
    by name); it returns a list of arrays, or one array when built with a single output.
    Inputs with a default value or an update keep their value in a container: fn[x] or
    fn['name'] reads it, fn[x] = v sets it, and each call replaces an updated one.
    `execute` is where calls run: "server" (each an Execute) or "local" (the compiled function
    is fetched once and run in this process, its shared variables' values held here)."""

    _printers = {}  # {(message, attrs): Print op} of its graph (printing.printers)

    def __init__(self, inputs, outputs, single, request, shared_vars, allow_downcast,
                 states=(), name=None, execute="server", client=None):
        self.inputs = inputs
        self.name = name
        # Aesara's fn.profile: the server's profile of this function (profile=True), else None.
        self.profile = ProfileStats(self) if request.profile else None
        self.outputs = outputs
        self._single = single
        self._request = request
        self._shared = shared_vars
        self._allow_downcast = allow_downcast
        self._states = list(states)  # input indices whose update is an extra output, in order
        self._containers = [None if i.value is None and i.update is None
                            else Container(i.variable, i.value)
                            for i in inputs]
        # Per input, (dtype, ndim, static dims) of the arrays that fit it as they are: those
        # need no filtering (static dims: (dim, size) for each dim of a known size).
        self._plain = [(np.dtype(t.dtype), t.ndim,
                        tuple((d, n) for d, n in enumerate(t.shape) if n is not None))
                       for t in (i.variable.type for i in inputs)]
        # No input keeps a value: plain arrays go in as they are.
        self._all_plain = not self._states and all(c is None for c in self._containers)
        self.value = _ByInput(self, lambda c: c.value)
        self.container = _ByInput(self, lambda c: c)
        self.execute = execute
        # The shared variables the updates replace, in the order of their values' outputs.
        self._updated = [shared_vars[u.input - len(inputs)] for u in request.updates]
        # Where calls run (kiln.runners: each an Execute, or in this process); compiles now.
        if make_runner is None:
            raise RuntimeError("kiln.runners is not loaded: import kiln")
        self._runner = make_runner(self, execute, client)

    def _find(self, key):
        """The index of the input `key` names (its variable, In or name), or TypeError."""
        for k, inp in enumerate(self.inputs):
            if key is inp.variable or key is inp or (isinstance(key, str) and key == inp.name):
                if self._containers[k] is None:
                    raise TypeError("Input %s has no value kept by the function" % key)
                return k
        raise TypeError("Unknown input or state: %s. %s" % (key, self._named_inputs_text()))

    def _named_inputs_text(self):
        """Which inputs can be named in a call, as Aesara says it."""
        named = [i.name for i in self.inputs if i.name]
        unnamed = len(self.inputs) - len(named)

        def plural(n):
            return "s" if n > 1 else ""
        if not named:
            if not unnamed:
                return "The function is supposed to have no input."
            if unnamed == 1:
                return ("The function has a single input variable which has no name, and thus "
                        "cannot be assigned through a keyword argument (use 'name=...' in a "
                        "Variable's constructor to give it a name).")
            return ("The function has %d inputs, but none of them is named, and thus they "
                    "cannot be assigned through keyword arguments (use 'name=...' in a "
                    "Variable's constructor to give it a name)." % unnamed)
        text = "The function has %d named input%s (%s)" % (len(named), plural(len(named)),
                                                            ", ".join(named))
        if not unnamed:
            return text + "."
        return text + (", and %d unnamed input%s which thus cannot be accessed through keyword "
                       "argument%s (use 'name=...' in a variable's constructor to give it a "
                       "name)." % (unnamed, plural(unnamed), plural(unnamed)))

    def __getitem__(self, key):
        return self._containers[self._find(key)].value

    def __setitem__(self, key, value):
        self._containers[self._find(key)].set(value)

    # Aesara's Function.trust_input: a promise that the arguments already have the inputs'
    # types. Kiln still checks them here (the server checks them again), so it only reads it.
    trust_input = False
    # The outputs' names when function() was given a dict of outputs (sorted, as Aesara): calls
    # return a dict.
    output_keys = None

    def __call__(self, *args, output_subset=None, **kwargs):
        if output_subset is None and self.output_keys is None:
            fast = self._runner.fast  # plain arrays in, run here: no frame more than needed
            if fast is not None and not kwargs:
                try:
                    out = fast(args)
                except _core.CallError as e:
                    raise KilnError(*e.args) from None
                if out is not NotImplemented:
                    return out
            return self._call(args, kwargs)
        # Aesara's output_subset: these outputs, by index (every update still runs).
        out = self._call(args, kwargs)
        outs = [out] if self._single else out
        chosen = range(len(outs)) if output_subset is None else output_subset
        if self.output_keys is None:
            return [outs[i] for i in chosen]
        return {self.output_keys[i]: outs[i] for i in chosen}

    def _call(self, args, kwargs):
        """The outputs of one call: one array for a single output, else a list."""
        if self._all_plain and len(args) == len(self.inputs) and not kwargs:
            # Every input given as an array of its dtype and rank: no filtering needed.
            for value, (dtype, ndim, static) in zip(args, self._plain):
                if (type(value) is not np.ndarray or value.dtype != dtype or value.ndim != ndim
                        or any(value.shape[d] != n for d, n in static)):
                    break
            else:
                args = list(args)
                out = self._runner.run(args)
                return out[0] if self._single else out
        if len(args) > len(self.inputs):
            raise TypeError("Function takes %d inputs, got %d" % (len(self.inputs), len(args)))
        values = list(args) + [None] * (len(self.inputs) - len(args))
        given = [True] * len(args) + [False] * (len(self.inputs) - len(args))
        for key, value in kwargs.items():
            k = next((k for k, i in enumerate(self.inputs) if i.name and i.name == key), None)
            if k is None:
                raise TypeError("Unknown input or state: %s. %s"
                                % (key, self._named_inputs_text()))
            values[k], given[k] = value, True
        args = []
        for k, inp in enumerate(self.inputs):
            if given[k] and self._runner.is_resident(values[k]):
                data = self._runner.resident(values[k], inp)
            elif given[k]:
                data = inp.variable.type.filter(values[k], self._allow_downcast,
                                                name=str(inp.name or inp.variable))
            elif self._containers[k] is not None and self._containers[k].value is not None:
                data = self._containers[k].value
            else:
                raise TypeError("Missing required input: %s" % (inp.name or inp.variable))
            args.append(data)
        out = self._runner.run(args)
        n = len(out) - len(self._states)
        for k, value in zip(self._states, out[n:]):
            self._containers[k].set(value)
        out = out[:n]
        return out[0] if self._single else out

    def print_compiled(self, fmt="DPRINT"):
        """The server's text of this function's optimized graph: "DPRINT" (debugprint's, each
        node with its position in the toposort) or "DOT" (pydotprint's). kiln.printing calls
        it for kiln.dprint(f) and pydotprint(f)."""
        req = _pb.service_pb2.PrintRequest(
            function_id=self.function_id, format=_pb.service_pb2.PrintRequest.Format.Value(fmt))
        return self._runner.call("Print", req).text

    @property
    def maker(self):
        """Aesara's fn.maker, for what it shows of the compiled function (FunctionMaker)."""
        if getattr(self, "_maker", None) is None:
            self._maker = FunctionMaker(self)
        return self._maker

    def free(self):
        """Aesara's Function.free (clears the intermediate storage kept with allow_gc=False):
        nothing to do, Kiln keeps no intermediate values between calls."""

    def get_shared(self):
        """The shared variables this function reads or updates."""
        return list(self._shared)

    def sync_shared(self):
        """Aesara's no-op (once for its old GPU backend)."""

    def copy(self, share_memory=False, swap=None, delete_updates=False, name=None,
             profile=None):
        """Aesara's Function.copy: the same function, with the shared variables in `swap`
        ({old: new}, of the same type) read and updated in their place, without its updates
        (delete_updates), or under another name. Kept input values are copied (shared with
        share_memory)."""
        request = _pb.service_pb2.CompileRequest()
        request.CopyFrom(self._request)
        if profile is not None:
            request.profile = bool(profile)
        shared = list(self._shared)
        for old, new in (swap or {}).items():
            if not any(old is s for s in shared):
                raise ValueError("SharedVariable: %s not found" % old)
            if old.type != new.type:
                raise TypeError("Type of given SharedVariable conflicts with original one: "
                                "%s vs %s" % (new.type, old.type))
            for msg in request.graph.inputs:
                if msg.shared == old.session_name():
                    msg.shared = new.session_name()
            shared = [new if s is old else s for s in shared]
        states = self._states
        if delete_updates:
            del request.updates[:]
            del request.graph.outputs[len(self.outputs):]
            # (An input only the updates read stays an input, as in Aesara.)
            request.on_unused_input = _pb.options_pb2.UNUSED_INPUT_IGNORE
            states = []
        ins = [In(i.variable, name=i.name, value=None if c is None else c.value,
                  update=None if delete_updates else i.update)
               for i, c in zip(self.inputs, self._containers)]
        copied = Function(ins, self.outputs, self._single, request, shared,
                          self._allow_downcast, states, self.name if name is None else name,
                          self.execute, self._runner.client)
        copied._printers = self._printers
        copied.output_keys = self.output_keys
        if share_memory:
            copied._containers = self._containers
        return copied

    def __getstate__(self):
        """What pickle stores: the compile request (the graph, options and function id's
        source), each input's name, kept value and whether it has an update, and the shared
        variables. Unpickling reconnects to kiln.config.server, where the function is found in
        the cache."""
        return {"request": self._request.SerializeToString(),
                "inputs": [(i.name, i.variable.name,
                            None if c is None else c.value, i.update is not None)
                           for i, c in zip(self.inputs, self._containers)],
                "n_outputs": len(self.outputs), "single": self._single, "states": self._states,
                "shared": self._shared, "shared_keys": [s.session_name() for s in self._shared],
                "allow_downcast": self._allow_downcast, "name": self.name,
                "execute": self.execute, "output_keys": self.output_keys}

    def __setstate__(self, state):
        request = _pb.service_pb2.CompileRequest.FromString(state["request"])
        renamed = {old: s.session_name() for old, s in zip(state["shared_keys"], state["shared"])}
        for msg in request.graph.inputs:
            if msg.shared:
                msg.shared = renamed[msg.shared]
        variables = [wire.type_from_proto(msg.type)(var_name)
                     for msg, (_, var_name, _, _) in zip(request.graph.inputs, state["inputs"])]
        outputs = wire.graph_from_proto(request.graph, variables + list(state["shared"]))
        n = state["n_outputs"]
        state_outputs = iter(outputs[n:])
        ins = [In(v, name=name, value=value,
                  update=next(state_outputs) if has_update else None)
               for v, (name, _, value, has_update) in zip(variables, state["inputs"])]
        self.__init__(ins, outputs[:n], state["single"], request, state["shared"],
                      state["allow_downcast"], state["states"], state.get("name"),
                      state.get("execute", "server"))
        self.output_keys = state.get("output_keys")


class UnusedInputError(KilnError):
    """Aesara's aesara.compile.function.types.UnusedInputError: an input of function() that
    no output or update needs, with on_unused_input="raise" (the default). Also a KilnError
    with the code the server answers (INVALID_ARGUMENT)."""

    def __init__(self, message, code="INVALID_ARGUMENT", reason=None, metadata=None):
        super().__init__(code, message, reason, metadata)

    def __str__(self):
        return self.message


def unused_input_error(k, v):
    """The UnusedInputError of input k, v, in Aesara's words."""
    return UnusedInputError(
        "function was asked to create a function computing outputs given certain "
        "inputs, but the provided input variable at index %d is not part of the "
        "computational graph needed to compute the outputs: %s.\nTo make this error "
        "into a warning, you can pass the parameter on_unused_input='warn' to "
        "aesara.function. To disable it completely, use on_unused_input='ignore'."
        % (k, v))


def check_inputs_used(inputs, outputs, updated, order=None):
    """UnusedInputError for the first of the inputs that neither the outputs (update values
    included) read nor an update writes, as the server checks it (core/compile/function.cc),
    with Aesara's message; raised before anything is sent. `order`: ancestors(outputs), when
    the caller has it."""
    used = {id(v) for v in (ancestors(outputs) if order is None else order)}
    used |= {id(v) for v in updated}
    for k, v in enumerate(inputs):
        if id(v) not in used:
            raise unused_input_error(k, v)


class ProfileStats:
    """Aesara's ProfileStats of one function, kept by the server: calls, time in calls and in
    thunks, compile time, peak memory and the ops by time, on the replica that runs it."""

    def __init__(self, fn):
        self._fn = fn

    def summary_text(self):
        req = _pb.service_pb2.PrintRequest(function_id=self._fn.function_id,
                                           format=_pb.service_pb2.PrintRequest.PROFILE)
        text = self._fn._runner.call("Print", req, route=self._fn._runner.route).text
        head, _, rest = text.partition("\n==================\n")
        return "%s\n==================\n  Message: %s\n%s" % (head, self._fn.name, rest)

    def summary(self, file=None, n_ops_to_print=20, n_apply_to_print=20):
        """Prints the summary (to sys.stderr, as Aesara)."""
        print(self.summary_text(), file=file or sys.stderr)


class _ByInput:
    """fn.value[x] and fn.container[x]: a function's kept values (or containers) by input."""

    def __init__(self, fn, view):
        self._fn, self._view = fn, view

    def __getitem__(self, key):
        return self._view(self._fn._containers[self._fn._find(key)])

    def __setitem__(self, key, value):
        self._fn[key] = value


def default_updates(roots, updates, no_default_updates):
    """The default updates (Aesara's) of the shared variables the roots and those updates read,
    but not of those already updated or listed in no_default_updates (True: none at all)."""
    if not isinstance(no_default_updates, (bool, list)):
        raise TypeError("no_default_update should be either a boolean or a list")
    if no_default_updates is True:
        return []
    skip = {id(s) for s, _ in updates} | {id(v) for v in (no_default_updates or [])}
    found, todo = [], list(roots)
    while todo:  # an update may read further shared variables with defaults of their own
        new = [(v, v.default_update) for v in graph_inputs(todo)
               if isinstance(v, SharedVariable) and v.default_update is not None
               and id(v) not in skip]
        skip.update(id(v) for v, _ in new)
        found += new
        todo = [u for _, u in new]
    return found


def _has_sparse(ins, outputs, updates, givens):
    """Whether a sparse value (a kiln.sparse variable or a SciPy matrix) is among function()'s
    arguments."""
    if outputs is None:
        outs = []
    elif isinstance(outputs, dict):
        outs = list(outputs.values())
    else:
        outs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    values = [i.variable for i in ins] + [i.update for i in ins] + [
        o.variable if isinstance(o, Out) else o for o in outs]
    for pairs in (updates, givens):
        values += [v for pair in (pairs.items() if isinstance(pairs, dict) else pairs or [])
                   for v in pair]
    return any(isinstance(v, SparseOperand) or is_scipy_sparse(v) for v in values)


def function(inputs, outputs=None, mode=None, updates=None, givens=None,
             no_default_updates=False, accept_inplace=False, name=None, rebuild_strict=True,
             allow_input_downcast=None, profile=None, on_unused_input=None):
    """Aesara's function: compiles outputs as a function of inputs on the server.
    accept_inplace=False refuses a graph holding an op that overwrites one of its inputs (an
    in-place op the user built), as Aesara. rebuild_strict has nothing to do: givens are
    replaced by rebuilding each node through core, which infers its types anew (Aesara's
    rebuild_strict=False), and a replacement whose type cannot stand for the original is
    refused either way."""
    ins = [as_in(i) for i in inputs]
    if _has_sparse(ins, outputs, updates, givens):  # over their parts: kiln.compile.sparse
        from kiln.compile.sparse import sparse_function
        return sparse_function(
            ins, outputs, mode=mode, updates=updates, givens=givens,
            no_default_updates=no_default_updates, accept_inplace=accept_inplace, name=name,
            rebuild_strict=rebuild_strict, allow_input_downcast=allow_input_downcast,
            profile=profile, on_unused_input=on_unused_input)
    output_keys = None
    if isinstance(outputs, dict):  # Aesara's: the outputs by name, sorted
        for key in outputs:
            if not isinstance(key, str):
                raise TypeError("function: the keys of a dict of outputs must be strings, got "
                                "%r" % (key,))
        output_keys = sorted(outputs)
        outputs = [outputs[k] for k in output_keys]
    single = outputs is not None and not isinstance(outputs, (list, tuple))
    outs = [] if outputs is None else [outputs] if single else list(outputs)
    outs = [o.variable if isinstance(o, Out) else as_tensor_variable(o) for o in outs]
    if isinstance(updates, dict):
        updates = list(updates.items())
    updates = [(s, as_tensor_variable(v)) for s, v in (updates or [])]
    states = []  # (input index, update) of inputs whose value the function keeps
    for k, i in enumerate(ins):
        if i.update is None:
            continue
        if isinstance(i.variable, SharedVariable):
            updates.append((i.variable, as_tensor_variable(i.update)))
        else:
            states.append((k, as_tensor_variable(i.update)))
    for s, v in updates:
        if not isinstance(s, SharedVariable):
            raise TypeError("updates: %s is not a shared variable" % s)
    for s, v in updates + [(ins[k].variable, v) for k, v in states]:
        if v.dtype != s.dtype or v.ndim != s.ndim:
            raise TypeError("An update must have the same type as the original shared variable "
                            "(shared_var=%s, shared_var.type=%s, update_val=%s, "
                            "update_val.type=%s)." % (s, s.type, v, v.type))
    n_user = len(outs)
    outs = outs + [v for _, v in states]  # the states' next values: extra outputs
    updates += default_updates(outs + [v for _, v in updates], updates, no_default_updates)
    if givens:
        replaced = clone_replace(outs + [v for _, v in updates], givens)
        outs, new_values = replaced[:len(outs)], replaced[len(outs):]
        updates = [(s, v) for (s, _), v in zip(updates, new_values)]
    graph_ins = [i.variable for i in ins]
    for v in graph_ins:
        if not isinstance(v, Variable) or isinstance(v, TensorConstant):
            raise TypeError("function: inputs must be variables, got %r" % (v,))
    seen = {id(v) for v in graph_ins}
    shared_vars = []
    # One walk of the graph for the leaves, the unused inputs and the Print ops (a model's
    # gradient graph has thousands of variables: each walk costs about a millisecond).
    order = ancestors(outs + [u for _, u in updates], graph_ins)
    leaves = [v for v in order if v.owner is None or id(v) in seen]
    for k, v in enumerate(leaves + [s for s, _ in updates]):
        if isinstance(v, SharedVariable) and id(v) not in seen:
            seen.add(id(v))
            shared_vars.append(v)
        elif v.owner is None and not isinstance(v, TensorConstant) and id(v) not in seen:
            raise MissingInputError(
                "Input %d (%s) of the graph (indices start from 0), used to compute %s, was "
                "not provided and not given a value. Use the Aesara flag "
                "exception_verbosity='high', for more information on this error."
                % (k, v, outs[0] if outs else v), variable=v)
    if not accept_inplace:
        inplace = _core.inplace_node([core_variable(v) for v in outs + [u for _, u in updates]])
        if inplace is not None:
            raise TypeError("Graph must not contain inplace operations: %s" % inplace)
    if on_unused_input in (None, "raise"):
        check_inputs_used(graph_ins, outs + [u for _, u in updates], [s for s, _ in updates],
                          order if all(v.owner is None for v in graph_ins) else None)
    all_ins = graph_ins + shared_vars
    optimizer, check = mode_options(mode)
    execute = execute_of(mode)
    if profile is None:
        profile = config.profile
    if execute == "local" and (profile or check == _pb.options_pb2.CHECK_DEBUG):
        raise ValueError("function: profile and DebugMode run on the server only "
                         "(execute='server')")
    req = _pb.service_pb2.CompileRequest(
        mode=optimizer, check=check, profile=bool(profile),
        on_unused_input=wire.unused_to_proto(on_unused_input, "on_unused_input"))
    names = {id(s): s.session_name() for s in shared_vars}
    wire.graph_to_proto(all_ins, outs + [u for _, u in updates], names, into=req.graph)
    for k, (s, _) in enumerate(updates):
        up = req.updates.add()
        up.input = all_ins.index(s)
        up.value.CopyFrom(req.graph.outputs[len(outs) + k])
    del req.graph.outputs[len(outs):]
    f = Function(ins, outs[:n_user], single, req, shared_vars, allow_input_downcast,
                 [k for k, _ in states], name, execute)
    f._printers = printing.printers(outs + [u for _, u in updates],
                                    order if all(v.owner is None for v in graph_ins) else None)
    f.output_keys = output_keys
    return f
