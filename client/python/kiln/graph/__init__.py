"""Aesara's graph model: Type, Variable, Constant, Apply and Op, built locally so that
`y.owner.op`, `y.type` and `dprint(y)` look as in Aesara before anything is sent to the server.
Every node is also made by core itself (kiln._core, the native module): its output types are
core's, so Python and C++ share one set of type rules and one set of errors.

Variables and nodes pickle as Aesara's do (their core twins are dropped and remade lazily from
the ops and the inputs' twins); pickling never recurses as deep as the graph: the first variable
or node of a graph pickled carries its ancestors in topological order before itself."""
import copy as _copy
import copyreg
import itertools
import threading
import weakref

import numpy as np

from kiln import _pb  # noqa: F401  (puts the generated stubs and kiln._core on kiln's path)
from kiln.config import config

try:
    from kiln import _core
except ImportError as e:
    raise ImportError("kiln: the native module kiln._core is missing: build it "
                      "(./deploy/build.sh kiln_core_python) or pip install client/python") from e

DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128")


# kiln.compile.function, set when kiln.compile loads (kiln's __init__ loads it): what the
# layers below compile call to evaluate a graph (Variable.eval, verify_grad) without
# importing upward.
compile_function = None


def compile_function_or_raise():
    """kiln.compile.function, or RuntimeError when kiln.compile has not loaded."""
    if compile_function is None:
        raise RuntimeError("kiln.compile is not loaded: import kiln")
    return compile_function


def check_dtype(dtype):
    """The dtype's name, or TypeError for one Kiln does not know."""
    name = np.dtype(dtype).name if not isinstance(dtype, str) else dtype
    if name not in DTYPES:
        raise TypeError("unknown dtype '%s'" % (dtype,))
    return name


class TensorType:
    """A dtype and a static shape: an int per known dim, None per unknown one."""

    # The class of its variables, as Aesara's Type.variable_type: Variable here, and
    # kiln.tensor's TensorVariable once kiln.tensor.variable sets it (the layer above).
    variable_type = None

    def __init__(self, dtype, shape=None, broadcastable=None):
        self.dtype = check_dtype(dtype)
        if shape is None:
            shape = tuple(1 if b else None for b in broadcastable)
        self.shape = tuple(None if s is None else int(s) for s in shape)
        for s in self.shape:
            if s is not None and s < 0:
                raise ValueError("TensorType: static shape %s has a negative dimension"
                                 % (self.shape,))

    ndim = property(lambda self: len(self.shape))
    broadcastable = property(lambda self: tuple(s == 1 for s in self.shape))

    def __eq__(self, other):
        return isinstance(other, TensorType) and (self.dtype, self.shape) == (other.dtype,
                                                                               other.shape)

    def __hash__(self):
        return hash((self.dtype, self.shape))

    def __str__(self):
        dims = ", ".join("?" if s is None else str(s) for s in self.shape)
        if len(self.shape) == 1:
            dims += ","
        return "TensorType(%s, (%s))" % (self.dtype, dims)

    __repr__ = __str__

    def clone(self, dtype=None, shape=None):
        """This type with another dtype or static shape."""
        return TensorType(dtype or self.dtype, self.shape if shape is None else shape)

    def in_same_class(self, otype):
        """Aesara's in_same_class: the same dtype and the same broadcastable dims."""
        return (isinstance(otype, TensorType) and self.dtype == otype.dtype
                and self.broadcastable == otype.broadcastable)

    def is_super(self, otype):
        """Whether every variable of otype is also one of this type: the same dtype and rank,
        and each of this type's static dims equal in otype."""
        return (isinstance(otype, TensorType) and self.dtype == otype.dtype
                and self.ndim == otype.ndim
                and all(s is None or s == o for s, o in zip(self.shape, otype.shape)))

    def filter_variable(self, other, allow_convert=True):
        """other as a variable of this type: itself when its type is this one or a subtype, a
        SpecifyShape of it when it is a supertype (the shape checked at run time), else
        TypeError. A value becomes a constant first. (The conversions are the variable class's,
        variable_type.filter_into: kiln.tensor's once it loads.)"""
        return self.variable_type.filter_into(self, other, allow_convert)

    def cannot_convert(self, other):
        """Aesara's TypeError for a variable filter_variable cannot convert."""
        return TypeError("Cannot convert Type %s (of Variable %s) into Type %s. You can try to "
                         "manually convert %s into a %s." % (other.type, other, self, other, self))

    def __call__(self, name=None):
        """A new variable of this type, as Aesara's type(name)."""
        return self.variable_type(self, name=name)

    def filter(self, value, allow_downcast=None, name=None):
        """The value as a NumPy array of this type, by Aesara's rules and in its words (each
        message after `name: `): an array must hold in this dtype without loss unless
        allow_downcast; a Python float goes to floatX when allow_downcast is None; anything
        else is converted when the conversion is exact."""
        prefix = "%s: " % name if name else ""
        if isinstance(value, Variable):
            raise TypeError(prefix + "Expected an array-like object, but found a Variable: maybe "
                            "you are trying to call a function on a (possibly shared) variable "
                            "instead of a numeric array?")
        target = np.dtype(self.dtype)
        if isinstance(value, np.ndarray) and value.dtype == target:
            data = value
        elif allow_downcast:
            data = np.asarray(value, dtype=target)
        elif isinstance(value, np.ndarray):
            if np.promote_types(self.dtype, value.dtype) != target:
                raise TypeError(
                    prefix + "%s cannot store a value of dtype %s without risking loss of "
                    "precision. If you do not mind this loss, you can: 1) explicitly cast your "
                    "data to %s, or 2) set \"allow_input_downcast=True\" when calling "
                    "\"function\". Value: \"%r\"" % (self, value.dtype, self.dtype, value))
            data = value.astype(target)
        elif (allow_downcast is None and isinstance(value, (float, np.floating))
              and self.dtype == config.floatX):
            data = np.asarray(value, dtype=target)
        else:
            original = np.asarray(value)
            data = np.asarray(value, dtype=target)
            same = original == data
            if original.dtype.kind in "fc" and data.dtype.kind in "fc":
                same = same | (np.isnan(original) & np.isnan(data))
            if not np.all(same):
                raise TypeError(
                    prefix + "%s cannot store accurately value %s, it would be represented as "
                    "%s. If you do not mind this precision loss, you can: 1) explicitly convert "
                    "your data to a numpy array of dtype %s, or 2) set "
                    "\"allow_input_downcast=True\" when calling \"function\"."
                    % (self, value, data, self.dtype))
        if data.ndim != self.ndim:
            raise TypeError(prefix + "Wrong number of dimensions: expected %d, got %d with "
                            "shape %s." % (self.ndim, data.ndim, data.shape))
        if not all(want is None or want == got for want, got in zip(self.shape, data.shape)):
            raise TypeError(prefix + "The type's shape (%s) is not compatible with the data's "
                            "(%s)" % (tuple(self.shape), data.shape))
        return data


# The ancestors of the graphs being pickled by this thread, {id(node): node}: a variable or node
# of one of them pickles without its ancestors, which come before it in the pickle. (Weak: a
# pickle that fails midway leaves its graph's nodes here, but keeps none of them alive.)
_pickling = threading.local()


def _in_flight():
    flight = getattr(_pickling, "nodes", None)
    if flight is None:
        flight = _pickling.nodes = weakref.WeakValueDictionary()
    return flight


class _Landed:
    """The end of a pickled graph's ancestors: what pickles it takes them off the graphs being
    pickled (it unpickles as None)."""

    def __init__(self, nodes):
        self.nodes = nodes

    def __reduce__(self):
        flight = _in_flight()
        for node in self.nodes:
            if flight.get(id(node)) is node:
                del flight[id(node)]
        self.nodes = ()
        return (_nothing, ())


def _nothing():
    return None


def _prelude(node):
    """The nodes of node's graph (node last), inputs before what is computed from them, to be
    pickled before it so that pickle never recurses along the graph; None when node's graph is
    already being pickled."""
    flight = _in_flight()
    if node is None or flight.get(id(node)) is node:
        return None
    nodes = io_toposort(node.outputs)
    for n in nodes:
        flight[id(n)] = n
    return nodes + [_Landed(nodes)]


def _graph_output(prelude, owner, index):
    """An unpickled computed variable: its owner's output (the owner came with the prelude)."""
    return owner.outputs[index]


def _graph_node(prelude, node):
    """An unpickled node (it came with the prelude)."""
    return node


class Variable:
    """A value in a graph: its type, the Apply node computing it (None for inputs and
    constants), its index among that node's outputs, and an optional name. As Aesara's: a
    `tag` (a scratchpad), an `auto_name` ("auto_<n>", in the order variables are made),
    `clone()`, `eval()`, and pickling (a computed variable pickles with its graph)."""

    __count__ = itertools.count(0)

    def __init__(self, type, owner=None, index=None, name=None):
        self.type = type
        if owner is not None and not isinstance(owner, Apply):
            raise TypeError("owner must be an Apply instance")
        self.owner = owner
        if index is not None and not isinstance(index, int):
            raise TypeError("index must be an int")
        self.index = index
        if name is not None and not isinstance(name, str):
            raise TypeError("name must be a string")
        self._name = name
        self.auto_name = "auto_%d" % next(Variable.__count__)

    @property
    def name(self):
        return self._name

    @name.setter
    def name(self, name):
        self._name = name
        twin = self.__dict__.get("_core")
        if twin is not None:
            twin.name = name or ""

    @property
    def tag(self):
        """Aesara's tag: a scratchpad for anything, made when first read; its `test_value` is
        checked against the type when set."""
        tag = self.__dict__.get("_tag")
        if tag is None:
            filter = getattr(self.type, "filter", None)
            tag = self._tag = (Scratchpad() if filter is None
                               else ValidatingScratchpad("test_value", filter))
        return tag

    @tag.setter
    def tag(self, tag):
        self._tag = tag

    def get_test_value(self):
        """The tag's test value, or Aesara's TestValueError when it has none."""
        if not hasattr(self.tag, "test_value"):
            raise TestValueError("%s has no test value " % (self,))
        return self.tag.test_value

    @classmethod
    def filter_into(cls, type, other, allow_convert=True):
        """other as a variable of `type` (TensorType.filter_variable): a variable of it or of
        a subtype as it is, else TypeError (kiln.tensor's variables also convert values and
        supertypes)."""
        if isinstance(other, Variable) and type.is_super(other.type):
            return other
        raise type.cannot_convert(other)

    def __str__(self):
        """Aesara's str: the name, "Elemwise{mul,no_inplace}.0", "<TensorType(float64, ())>" or
        "TensorConstant{2.0}", as core prints the twin."""
        return str(core_variable(self))

    __repr__ = __str__

    def clone(self, **kwargs):
        """Aesara's clone: a new variable of the same type with no owner, named as this one
        (or `name=`), with a copy of its tag."""
        name = kwargs.pop("name", self.name)
        cp = self.__class__(type=self.type, owner=None, index=None, name=name, **kwargs)
        if "_tag" in self.__dict__:
            cp.tag = _copy.copy(self.tag)
        return cp

    def eval(self, inputs_to_values=None):
        """Aesara's eval: this variable's value given values of the inputs it depends on
        ({variable: value}), compiled once per set of inputs and cached on the variable
        (`_fn_cache`, keyed by the inputs)."""
        function = compile_function_or_raise()
        if inputs_to_values is None:
            inputs_to_values = {}
        cache = self.__dict__.get("_fn_cache")
        if cache is None:
            cache = self._fn_cache = {}
        inputs = tuple(sorted(inputs_to_values.keys(), key=id))
        if inputs not in cache:
            cache[inputs] = function(list(inputs), self)
        return cache[inputs](*[inputs_to_values[i] for i in inputs])

    # (Earlier Kiln's name of the eval cache.)
    _eval_functions = property(lambda self: self.__dict__.setdefault("_fn_cache", {}))

    def get_parents(self):
        return [self.owner] if self.owner is not None else []

    def __copy__(self):
        """copy.copy: another variable with the same type, owner, index, name, auto_name and
        tag (shared), as Aesara's. A copy of an input is another input (with a twin of its
        own); a copy of a computed variable is computed by the same node."""
        cp = self.__class__.__new__(self.__class__)
        cp.__dict__.update(self.__dict__)
        cp.__dict__.pop("_core", None)
        cp.__dict__.pop("_fn_cache", None)
        return cp

    def __getstate__(self):
        """What pickle keeps: everything but the twin in core (remade when first needed) and
        the functions eval compiled."""
        d = self.__dict__.copy()
        d.pop("_core", None)
        d.pop("_fn_cache", None)
        return d

    def __reduce_ex__(self, protocol):
        if self.__class__.__reduce__ is not object.__reduce__:
            return self.__reduce__()  # a class's own (shared variables)
        prelude = _prelude(self.owner)
        if prelude is not None:
            # The first variable of its graph pickled: the graph's nodes first (this variable
            # among their outputs), then itself as its owner's output.
            return (_graph_output, (prelude, self.owner, self.index))
        return (copyreg.__newobj__, (self.__class__,), self.__getstate__())


TensorType.variable_type = Variable


class Constant(Variable):
    """A variable with a value: TensorConstant{2.0}."""

    def __init__(self, type, data, name=None):
        super().__init__(type, name=name)
        self.data = data

    def clone(self, **kwargs):
        """Aesara's: a constant is its own clone."""
        return self

    def get_test_value(self):
        return self.data

    @property
    def value(self):
        return self.data


def core_variable(v):
    """v's twin in core: made once for an input or a constant; an output's comes with its node,
    and is remade with it (and with the nodes above it that lack theirs, as after unpickling)
    when it has none."""
    twin = v.__dict__.get("_core")
    if twin is None:
        if v.owner is not None:
            real = v.owner.outputs[v.index]
            if real is not v:  # a copy.copy of the node's output: computed by the same node
                return core_variable(real)
            _remake_twins(v.owner)
            return v._core
        if isinstance(v, Constant):
            twin = _core.constant(v.type.dtype, list(v.data.shape), v.data.tobytes(order="C"),
                                  v.name or "")
        else:
            twin = _core.tensor(v.type.dtype, list(v.type.shape), v._twin_name())
        v._core = twin  # v.name keeps it named
    return twin


Variable._twin_name = lambda self: self.name or ""  # an input's name in core (a hook)


def _remake_twins(node):
    """Makes again in core the twins of node's outputs and of the nodes above it whose outputs
    have none (a graph unpickled): each node from its op and its inputs' twins, inputs first,
    by a walk that does not recurse (graphs may be 100k nodes deep)."""
    order, seen = [], {id(node)}
    stack = [(node, False)]
    while stack:
        n, expanded = stack.pop()
        if expanded:
            order.append(n)
            continue
        stack.append((n, True))
        for i in reversed(n.inputs):
            o = i.owner
            if o is not None and id(o) not in seen and "_core" not in i.__dict__ \
                    and o.outputs[i.index] is i:
                seen.add(id(o))
                stack.append((o, False))
    for n in order:
        twin = _core.make_node(n.op.kind, dict(n.op.wire_attrs()),
                               [core_variable(i) for i in n.inputs])
        for out, out_twin in zip(n.outputs, twin.outputs):
            if "_core" not in out.__dict__:
                if out.name:
                    out_twin.name = out.name
                out._core = out_twin


def apply_typed_by_core(op, inputs):
    """The node of op on inputs, made by core (op.kind and op.wire_attrs() name core's op) and
    typed as core types it; core's error (a GraphError, both TypeError and ValueError) when
    core refuses the inputs."""
    twin = _core.make_node(op.kind, dict(op.wire_attrs()),
                           [core_variable(i) for i in inputs])
    node = Apply(op, inputs, [TensorType(o.type.dtype, o.type.shape) for o in twin.outputs])
    for out, out_twin in zip(node.outputs, twin.outputs):
        out._core = out_twin
    return node


class Apply:
    """op applied to inputs, giving outputs; a `tag` scratchpad as Aesara's."""

    def __init__(self, op, inputs, output_types):
        self.op = op
        self.inputs = list(inputs)
        self.outputs = [t.variable_type(t, owner=self, index=i)
                        for i, t in enumerate(output_types)]

    nin = property(lambda self: len(self.inputs))
    nout = property(lambda self: len(self.outputs))

    @property
    def out(self):
        return self.outputs[0]

    @property
    def tag(self):
        tag = self.__dict__.get("_tag")
        if tag is None:
            tag = self._tag = Scratchpad()
        return tag

    @tag.setter
    def tag(self, tag):
        self._tag = tag

    def get_parents(self):
        return list(self.inputs)

    def __str__(self):
        return "%s(%s)" % (self.op, ", ".join(map(str, self.inputs)))

    __repr__ = __str__

    def __copy__(self):
        """copy.copy: another node with the same op, inputs and outputs (lists shared)."""
        cp = self.__class__.__new__(self.__class__)
        cp.__dict__.update(self.__dict__)
        return cp

    def __reduce_ex__(self, protocol):
        prelude = _prelude(self)
        if prelude is not None:  # the first node of its graph pickled: the graph first
            return (_graph_node, (prelude, self))
        return (copyreg.__newobj__, (self.__class__,), self.__dict__.copy())


class Op:
    """An op is its kind (Aesara's class name) plus its props: equal props, equal ops.
    Subclasses define __props__, make_node and wire_attrs; core names the op (Aesara's name).
    Every op core registers has a subclass generated from core's field list: kiln.ops."""

    __props__ = ()
    kind = None  # the class name the server knows ("Elemwise", "DimShuffle"...)

    def _props(self):
        return tuple(getattr(self, p) for p in self.__props__)

    def __eq__(self, other):
        return self.__class__ is other.__class__ and self._props() == other._props()

    def __hash__(self):
        return hash((self.__class__.__name__, self._props()))

    def core_op(self):
        """This op made by core (kiln._core): what checks its attributes and names it."""
        made = self.__dict__.get("_core_op")
        if made is None:
            made = self._core_op = _core.make_op(self.kind, dict(self.wire_attrs()))
        return made

    @property
    def destroy_map(self):
        """Aesara's destroy_map, {output: [input]}: the inputs whose buffer an output overwrites
        (core's)."""
        return self.core_op().destroy_map

    def __str__(self):
        return str(self.core_op())

    def __call__(self, *inputs):
        node = self.make_node(*inputs)
        return node.outputs[0] if len(node.outputs) == 1 else node.outputs

    def wire_attrs(self):
        """(name, value) pairs as core's Op::Attrs: ints, floats, strings or lists of ints."""
        return []

    def __repr__(self):
        return str(self)


def ancestors(outputs, blockers=()):
    """Every variable the outputs depend on, inputs before what is computed from them; walks
    stop at `blockers`."""
    stop = {id(b) for b in blockers}
    order, seen = [], set()
    stack = [(v, False) for v in reversed(list(outputs))]
    while stack:
        v, expanded = stack.pop()
        if expanded:
            order.append(v)
            continue
        if id(v) in seen:
            continue
        seen.add(id(v))
        stack.append((v, True))
        if v.owner is not None and id(v) not in stop:
            stack.extend((i, False) for i in reversed(v.owner.inputs) if id(i) not in seen)
    return order


def graph_inputs(outputs, blockers=()):
    """The owner-less variables (inputs and constants) the outputs depend on."""
    stop = {id(b) for b in blockers}
    return [v for v in ancestors(outputs, blockers) if v.owner is None or id(v) in stop]


def io_toposort(outputs, blockers=()):
    """The Apply nodes between blockers and outputs, each after the nodes computing its inputs."""
    stop = {id(b) for b in blockers}
    nodes, seen = [], set()
    for v in ancestors(outputs, blockers):
        if v.owner is not None and id(v) not in stop and id(v.owner) not in seen:
            seen.add(id(v.owner))
            nodes.append(v.owner)
    return nodes


def clone_replace(outputs, replace):
    """The outputs with each key of `replace` (a dict or pairs) replaced by its value, in a
    copy of the graph; the original graph is not changed."""
    pairs = list(replace.items()) if isinstance(replace, dict) else list(replace)
    memo = {id(k): v for k, v in pairs}
    keys = [k for k, _ in pairs]
    for node in io_toposort(outputs, keys):
        new_inputs = [memo.get(id(i), i) for i in node.inputs]
        if all(a is b for a, b in zip(new_inputs, node.inputs)):
            continue
        clone = node.op.make_node(*new_inputs)
        for old, new in zip(node.outputs, clone.outputs):
            new.name = old.name
            memo[id(old)] = new
    return [memo.get(id(o), o) for o in outputs]


# Aesara's module tree under aesara.graph (graph.basic, graph.fg, graph.op, graph.type,
# graph.utils, graph.rewriting) and the names aesara.graph exports from it.
from kiln.graph import basic, fg, op, rewriting, type, utils  # noqa: E402,F401,A004
from kiln.graph.basic import clone  # noqa: E402,F401
from kiln.graph.fg import FunctionGraph  # noqa: E402,F401
from kiln.graph.rewriting import (RewriteDatabaseQuery, graph_rewriter,  # noqa: E402,F401
                                  node_rewriter, rewrite_graph)
from kiln.graph.type import Type  # noqa: E402,F401
from kiln.graph.replace import vectorize_graph  # noqa: E402,F401  (PyTensor's)


# Aesara's tag classes and TestValueError, from kiln.graph.utils (imported last: it may import
# this module).
from kiln.graph.utils import Scratchpad, TestValueError, ValidatingScratchpad  # noqa: E402
