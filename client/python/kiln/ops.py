"""Every op core registers, as a Python class generated from core's field list
(kiln._core.op_fields): Aesara's class name, __props__ in wire order with core's defaults,
equality and hashing by props, pickling by class name and wire attributes, and make_node through
core. An op core gains is usable from Python the day it is added:

    >>> from kiln import ops
    >>> ops.Repeat(axis=0)
    Repeat{axis=0}

kiln.tensor writes a few classes by hand where Aesara's Python API differs from the wire
(Elemwise, DimShuffle, Print, RandomVariable, OpFromGraph): each subclasses its generated class
and registers itself (`view`), so ops core makes (grad's nodes, a graph from the server) come
back as that class."""
from kiln.graph import Op, _core, apply_typed_by_core

# What make_node turns each input into (kiln.tensor.as_tensor_variable, set when kiln.tensor
# loads); until then, inputs must be variables already.
as_input = None


def _prop(value):
    """A wire attribute value as a prop: lists become tuples (props are hashable)."""
    return tuple(value) if isinstance(value, list) else value


def _wire(value):
    """A prop as a wire attribute value: ints, floats, strings or lists of ints."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, tuple):
        return [int(v) for v in value]
    return value


class GeneratedOp(Op):
    """An op of core's, by its class name (`kind`) and props (its wire attributes, None where
    unset). Constructed with the props positionally in __props__ order or by name; core checks
    them at once (a GraphError naming the op and the attribute)."""

    kind = None
    __props__ = ()
    _field_defaults = {}

    def __init__(self, *args, **kwargs):
        props = type(self).__props__
        if len(args) > len(props):
            raise TypeError("%s takes at most %d props %s, got %d"
                            % (self.kind, len(props), props, len(args)))
        for name, value in zip(props, args):
            if name in kwargs:
                raise TypeError("%s: prop '%s' given twice" % (self.kind, name))
            kwargs[name] = value
        unknown = sorted(set(kwargs) - set(props))
        if unknown:
            raise TypeError("%s has no prop %s (its props: %s)"
                            % (self.kind, ", ".join(map(repr, unknown)), ", ".join(props)))
        for name in props:
            setattr(self, name, _prop(kwargs[name]) if name in kwargs
                    else self._field_defaults.get(name))
        self.core_op()

    def wire_attrs(self):
        return [(name, _wire(getattr(self, name))) for name in self.__props__
                if getattr(self, name) is not None]

    def make_node(self, *inputs):
        if as_input is not None:
            inputs = [as_input(i) for i in inputs]
        return apply_typed_by_core(self, list(inputs))

    @classmethod
    def from_attrs(cls, attrs):
        """The op of these wire attributes (a dict); the inverse of wire_attrs."""
        return cls(**attrs)

    def __reduce__(self):
        """Pickled as its class and wire attributes, rebuilt by the class's from_attrs (so a
        pickle holds no core object and outlives changes to the props' Python form)."""
        return (_rebuild, (type(self), dict(self.wire_attrs())))


def _rebuild(cls, attrs):
    """An unpickled op: cls from its wire attributes."""
    return cls.from_attrs(attrs)


def _generate(kind, fields):
    """The class of core's op `kind` with these (field, default) pairs."""
    doc = "%s(%s): core's op %s, generated from its field list." % (
        kind, ", ".join("%s=%r" % f for f in fields), kind)
    return type(kind, (GeneratedOp,), {
        "__module__": __name__, "__qualname__": kind, "__doc__": doc, "kind": kind,
        "__props__": tuple(name for name, _ in fields),
        "_field_defaults": {name: _prop(default) for name, default in fields},
    })


# The generated classes, by core's class name, also this module's attributes (ops.Repeat).
GENERATED = {kind: _generate(kind, fields) for kind, fields in _core.op_fields().items()}
globals().update(GENERATED)

# The class that stands for each op (a generated one, or a view registered over it).
_classes = dict(GENERATED)


def view(cls):
    """Registers cls, a subclass of a generated class written with Aesara's Python API, as the
    class of its op: from_attrs (core's nodes, unpickling, the wire) builds it. A decorator."""
    generated = GENERATED.get(cls.kind)
    if generated is None or not issubclass(cls, generated):
        raise TypeError("%s: a view must subclass the generated class of a registered op"
                        % cls.__name__)
    _classes[cls.kind] = cls
    return cls


def op_class(kind):
    """The class of core's op `kind`; KeyError naming it when no op has that name."""
    try:
        return _classes[kind]
    except KeyError:
        raise KeyError("kiln: no op is registered as '%s'" % kind) from None


def from_attrs(kind, attrs, core_op=None):
    """The op `kind` with these wire attributes (a dict or pairs), by its class. core_op, core's
    op itself, spares making it again."""
    op = op_class(kind).from_attrs(dict(attrs))
    if core_op is not None:
        op._core_op = core_op
    return op
