"""function() with sparse values (kiln.sparse). Each sparse variable among the inputs, outputs,
updates and givens stands for its four tensors (data, indices, indptr, shape): the compiled
function is an ordinary one over them, and SparseFunction wraps it so that calls take and return
SciPy matrices. function() comes here only when a sparse value is present: functions of dense
values pay nothing for it."""
import collections
import warnings

from kiln.compile import functions
from kiln.compile.io import In, Out, as_in
from kiln.errors import KilnError
from kiln.graph import ancestors, clone_replace
from kiln.sparse.type import is_scipy_sparse, value_from_parts, value_parts
from kiln.sparse.variable import (SparseVariable, as_sparse_or_tensor_variable,
                                  as_sparse_variable)
from kiln.tensor.basic import as_tensor_variable
from kiln.tensor.sharedvar import SharedVariable

PART_NAMES = ("data", "indices", "indptr", "shape")

# One input as the caller sees it: its SparseTensorType (None for a tensor), its name and, for
# a sparse one, its default value (a SciPy matrix, or None).
Slot = collections.namedtuple("Slot", "type name default")


class SparseValueError(KilnError, ValueError):
    """The server refused a call of a function with sparse values as INVALID_ARGUMENT (a
    malformed matrix, shapes that do not agree): where Aesara raises ValueError. Also the
    KilnError with the server's code, message and reason."""


def is_sparse_value(v):
    """Whether v is a sparse variable or a SciPy sparse matrix."""
    return isinstance(v, SparseVariable) or is_scipy_sparse(v)


def _pairs(mapping):
    return list(mapping.items()) if isinstance(mapping, dict) else list(mapping or [])


def _flat_update(shared, value):
    """A sparse shared variable's update as its parts' updates (a part left as it is, none)."""
    value = as_sparse_or_tensor_variable(value)
    if not (isinstance(shared, SparseVariable) and isinstance(value, SparseVariable)
            and (value.format, value.dtype) == (shared.format, shared.dtype)):
        raise TypeError("An update must have the same type as the original shared variable "
                        "(shared_var=%s, shared_var.type=%s, update_val=%s, update_val.type=%s)."
                        % (shared, shared.type, value, value.type))
    if not isinstance(shared.parts.data, SharedVariable):
        raise TypeError("updates: %s is not a shared variable" % shared)
    return [(p, v) for p, v in zip(shared.parts, value.parts) if v is not p]


def _flat_given(old, new):
    """A replacement in givens, of a sparse variable by another of its format and dtype, as
    its parts' replacements."""
    if not isinstance(old, SparseVariable):
        raise TypeError("givens: the sparse %s cannot replace the tensor %s" % (new, old))
    new = as_sparse_variable(new)
    if (new.format, new.dtype) != (old.format, old.dtype):
        raise TypeError("givens: %s of type %s cannot replace %s of type %s"
                        % (new, new.type, old, old.type))
    return list(zip(old.parts, new.parts))


def sparse_function(inputs, outputs=None, updates=None, givens=None, on_unused_input=None,
                    allow_input_downcast=None, **options):
    """function() (kiln.compile.functions) of arguments holding sparse values: compiled over
    their parts, wrapped in a SparseFunction."""
    ins, slots, flat_ins = [as_in(i) for i in inputs], [], []
    for inp in ins:
        v = inp.variable
        if not isinstance(v, SparseVariable):
            slots.append(Slot(None, inp.name, None))
            flat_ins.append(inp)
            continue
        if inp.update is not None:
            raise NotImplementedError("function: the sparse input %s has an update; use a sparse "
                                      "shared variable (kiln.shared of a SciPy matrix)" % v)
        default = None if inp.value is None else v.type.filter(inp.value, name=inp.name)
        slots.append(Slot(v.type, inp.name, default))
        flat_ins += [In(p, name=inp.name and "%s.%s" % (inp.name, kind))
                     for p, kind in zip(v.parts, PART_NAMES)]
    output_keys = None
    if isinstance(outputs, dict):
        output_keys = sorted(outputs)
        outputs = [outputs[k] for k in output_keys]
    single = outputs is not None and not isinstance(outputs, (list, tuple))
    formats, flat_outs = [], []  # per output, its format (None for a tensor)
    for o in [] if outputs is None else [outputs] if single else outputs:
        v = as_sparse_or_tensor_variable(o.variable if isinstance(o, Out) else o)
        formats.append(v.format if isinstance(v, SparseVariable) else None)
        flat_outs += list(v.parts) if isinstance(v, SparseVariable) else [v]
    flat_updates = []
    for shared, value in _pairs(updates):
        if is_sparse_value(shared) or is_sparse_value(value):
            flat_updates += _flat_update(shared, value)
        else:
            flat_updates.append((shared, as_tensor_variable(value)))
    flat_givens = []
    for old, new in _pairs(givens):
        if is_sparse_value(old) or is_sparse_value(new):
            flat_givens += _flat_given(old, new)
        else:
            flat_givens.append((old, new))
    _check_used(ins, flat_outs, flat_updates, flat_givens, on_unused_input)
    inner = functions.function(flat_ins, flat_outs, updates=flat_updates, givens=flat_givens,
                               on_unused_input="ignore",
                               allow_input_downcast=allow_input_downcast, **options)
    return SparseFunction(inner, slots, formats, single, output_keys, allow_input_downcast)


def _check_used(ins, outs, updates, givens, on_unused_input):
    """The unused-input check of function() on the caller's inputs: a sparse input is used when
    one of its parts is (a sparse function's parts are all inputs, used or not)."""
    if on_unused_input == "ignore":
        return
    roots = outs + [v for _, v in updates] + [as_tensor_variable(i.update) for i in ins
                                              if i.update is not None]
    if givens:
        roots = clone_replace(roots, givens)
    used = {id(v) for v in ancestors(roots)} | {id(s) for s, _ in updates}
    for k, inp in enumerate(ins):
        v = inp.variable
        if not any(id(p) in used for p in (v.parts if isinstance(v, SparseVariable) else [v])):
            error = functions.unused_input_error(k, v)
            if on_unused_input == "warn":
                warnings.warn(str(error))
            else:
                raise error


class SparseFunction:
    """A compiled function with sparse inputs or outputs. A call takes a SciPy matrix for each
    sparse input (any format, a dense array or nested lists too, converted as Aesara's
    SparseTensorType.filter does: the dtype must upcast to the input's) and returns SciPy
    matrices of the outputs' formats. `function` is the compiled Function over the parts, which
    also answers every other attribute (function_id, print_compiled, get_shared...)."""

    def __init__(self, function, slots, formats, single, output_keys=None,
                 allow_downcast=None):
        self.function = function
        self._slots = list(slots)
        self._formats = list(formats)
        self._single = single
        self.output_keys = output_keys
        self._allow_downcast = allow_downcast

    def __getattr__(self, name):
        if name.startswith("__") or "function" not in self.__dict__:
            raise AttributeError(name)
        return getattr(self.function, name)

    def __call__(self, *args, output_subset=None, **kwargs):
        try:
            out = self.function(*self._arguments(args, kwargs))
        except KilnError as e:
            if e.code != "INVALID_ARGUMENT" or isinstance(e, ValueError):
                raise
            raise SparseValueError(e.code, e.message, e.reason, e.metadata) from None
        values = self._results(out)
        if output_subset is not None:
            values = [values[i] for i in output_subset]
            keys = None if self.output_keys is None else [self.output_keys[i]
                                                          for i in output_subset]
            return values if keys is None else dict(zip(keys, values))
        if self.output_keys is not None:
            return dict(zip(self.output_keys, values))
        return values[0] if self._single else values

    def _arguments(self, args, kwargs):
        """The compiled function's arguments: each sparse value as its four arrays, each
        input not given its kept value (or TypeError)."""
        if len(args) > len(self._slots):
            raise TypeError("Function takes %d inputs, got %d" % (len(self._slots), len(args)))
        given = dict(enumerate(args))
        for key, value in kwargs.items():
            k = next((k for k, s in enumerate(self._slots) if s.name and s.name == key), None)
            if k is None:
                raise TypeError("Unknown input or state: %s. The function's named inputs: %s"
                                % (key, ", ".join(s.name for s in self._slots if s.name)))
            given[k] = value
        flat, position = [], 0  # position: the slot's first input in the compiled function
        for k, slot in enumerate(self._slots):
            if slot.type is None:
                kept = self.function._containers[position]
                value = given[k] if k in given else kept and kept.value
                if value is None:
                    raise TypeError("Missing required input: %s"
                                    % (slot.name or self.function.inputs[position].variable))
                flat.append(value)
                position += 1
                continue
            value = given[k] if k in given else slot.default
            if value is None:
                raise TypeError("Missing required input: %s" % (slot.name or "input %d" % k))
            flat += value_parts(slot.type.filter(value, allow_downcast=self._allow_downcast,
                                                 name=slot.name))
            position += 4
        return flat

    def _results(self, out):
        """The compiled function's outputs grouped back: a SciPy matrix per sparse output."""
        out = iter(out)
        return [next(out) if fmt is None else value_from_parts(fmt, *[next(out) for _ in range(4)])
                for fmt in self._formats]

    def copy(self, share_memory=False, swap=None, delete_updates=False, name=None,
             profile=None):
        """Function.copy, a sparse shared variable in `swap` swapped part by part (the parts
        the function reads)."""
        flat_swap, read = {}, {id(s) for s in self.function.get_shared()}
        for old, new in (swap or {}).items():
            if is_sparse_value(old):
                pairs = [(p, q) for p, q in _flat_given(old, new) if id(p) in read]
                if not pairs:
                    raise ValueError("SharedVariable: %s not found" % old)
                flat_swap.update(pairs)
            else:
                flat_swap[old] = new
        copied = self.function.copy(share_memory, flat_swap, delete_updates, name, profile)
        return SparseFunction(copied, self._slots, self._formats, self._single,
                              self.output_keys, self._allow_downcast)
