"""Aesara's graph model: Type, Variable, Constant, Apply and Op, built locally so that
`y.owner.op`, `y.type` and `dprint(y)` look as in Aesara before anything is sent to the server.
Every node is also made by core itself (kiln._core, the native module): its output types are
core's, so Python and C++ share one set of type rules and one set of errors."""
import numpy as np

from kiln import _pb  # noqa: F401  (puts the generated stubs and kiln._core on kiln's path)

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

    def filter(self, value, allow_downcast=False, name=None):
        """The value as a NumPy array of this type; TypeError as Aesara's filter."""
        data = np.asarray(value)
        if data.dtype.name != self.dtype:
            target = np.dtype(self.dtype)
            exact = np.can_cast(data.dtype, target, casting="safe")
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                exact = exact or np.asarray(value, dtype=target) == value
            if not (exact or allow_downcast):
                raise TypeError(
                    "%s: the value has dtype %s, which cannot be converted to %s without loss "
                    "of precision (pass allow_input_downcast=True to accept it)"
                    % (name or str(self), data.dtype.name, self.dtype))
            data = data.astype(target)
        if data.ndim != self.ndim:
            raise TypeError("%s: wrong number of dimensions: expected %d, got %d with shape %s"
                            % (name or str(self), self.ndim, data.ndim, data.shape))
        for d, (want, got) in enumerate(zip(self.shape, data.shape)):
            if want is not None and want != got:
                raise TypeError("%s: dim %d has size %d, expected %d"
                                % (name or str(self), d, got, want))
        return data


class Variable:
    """A value in a graph: its type, the Apply node computing it (None for inputs and
    constants), its index among that node's outputs, and an optional name."""

    def __init__(self, type, owner=None, index=None, name=None):
        self.type = type
        self.owner = owner
        self.index = index
        self._name = name

    @property
    def name(self):
        return self._name

    @name.setter
    def name(self, name):
        self._name = name
        twin = self.__dict__.get("_core")
        if twin is not None:
            twin.name = name or ""

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


TensorType.variable_type = Variable


class Constant(Variable):
    """A variable with a value: TensorConstant{2.0}."""

    def __init__(self, type, data, name=None):
        super().__init__(type, name=name)
        self.data = data


def core_variable(v):
    """v's twin in core: made once for an input or a constant; an output's comes with its node."""
    twin = getattr(v, "_core", None)
    if twin is None:
        if v.owner is not None:
            raise AssertionError("%s was computed outside core" % (v,))
        if isinstance(v, Constant):
            twin = _core.constant(v.type.dtype, list(v.data.shape), v.data.tobytes(order="C"),
                                  v.name or "")
        else:
            twin = _core.tensor(v.type.dtype, list(v.type.shape), v.name or "")
        v._core = twin  # v.name keeps it named
    return twin


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
    """op applied to inputs, giving outputs."""

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

    def __str__(self):
        return "%s(%s)" % (self.op, ", ".join(map(str, self.inputs)))

    __repr__ = __str__


class Op:
    """An op is its kind (Aesara's class name) plus its props: equal props, equal ops.
    Subclasses define __props__, make_node and wire_attrs; core names the op (Aesara's name).
    Every op core registers has a subclass generated from core's field list: kiln.ops."""

    __props__ = ()
    kind = None  # the class name the server knows ("Elemwise", "DimShuffle"...)

    def _props(self):
        return tuple(getattr(self, p) for p in self.__props__)

    def __eq__(self, other):
        return type(self) is type(other) and self._props() == other._props()

    def __hash__(self):
        return hash((type(self).__name__, self._props()))

    def core_op(self):
        """This op made by core (kiln._core): what checks its attributes and names it."""
        made = self.__dict__.get("_core_op")
        if made is None:
            made = self._core_op = _core.make_op(self.kind, dict(self.wire_attrs()))
        return made

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
