"""aesara.scan over core's builder (core/scan/scan.h): the step function runs here on the step's
symbolic arguments, and core makes the loop (the Python variables of its outputs view core's
nodes), which the server then compiles and runs."""
from collections import OrderedDict

from kiln.graph import core_variable, _core
from kiln.scan.utils import until
from kiln.tensor.basic import as_tensor_variable
from kiln.tensor.from_core import variables_of
from kiln.tensor.type import TensorType
from kiln.tensor.variable import TensorVariable


class OrderedUpdates(OrderedDict):
    """Aesara's OrderedUpdates: shared variable -> its new value."""

    def __repr__(self):
        return "OrderedUpdates(%s)" % (list(self.items()),)


def _as_list(x):
    if x is None:
        return []
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _sequence(s):
    if isinstance(s, dict):
        return as_tensor_variable(s["input"]), [int(t) for t in s.get("taps", [0])]
    return as_tensor_variable(s), [0]


def _output_info(o):
    if o is None:
        return None, []
    if isinstance(o, dict):
        if o.get("initial") is None:
            return None, []
        return as_tensor_variable(o["initial"]), [int(t) for t in o.get("taps", [-1])]
    return as_tensor_variable(o), [-1]


def _step_results(results):
    """(outputs, updates, until condition) of what a step function returned, in any of the forms
    Aesara accepts: outputs, a dict of updates, an until, or a tuple of these."""
    outputs, updates, cond = [], OrderedDict(), None
    parts = list(results) if isinstance(results, tuple) else [results]
    if len(parts) > 3 or not isinstance(results, tuple):
        parts = [results]
    for part in parts:
        if isinstance(part, until):
            cond = part.condition
        elif isinstance(part, dict):
            updates.update(part)
        elif isinstance(part, list) and part and all(isinstance(p, tuple) for p in part):
            updates.update(part)
        elif part is not None:
            outputs.extend(_as_list(part))
    return [as_tensor_variable(o) for o in outputs], updates, cond


def _step_variable(twin, given):
    """The client variable of a step argument core made: one the caller gave, or a new one."""
    if given is not None:
        return given
    v = TensorVariable(TensorType(twin.type.dtype, twin.type.shape))
    v._core = twin
    return v


def scan(fn, sequences=None, outputs_info=None, non_sequences=None, n_steps=None,
         truncate_gradient=-1, go_backwards=False, mode=None, name=None, profile=False,
         allow_gc=None, strict=False, return_list=False):
    """Aesara's scan: (outputs, updates). outputs holds each output's value at every step (one
    variable, a list, or None when fn returns only updates); updates maps the shared variables
    fn updates to their values after the last step (pass it to function)."""
    seqs = [_sequence(s) for s in _as_list(sequences)]
    infos = [_output_info(o) for o in _as_list(outputs_info)]
    non_seqs = [as_tensor_variable(v) for v in _as_list(non_sequences)]
    steps = None if n_steps is None else as_tensor_variable(n_steps)
    builder = _core.scan_start(
        [(core_variable(x), taps) for x, taps in seqs],
        [(None if x is None else core_variable(x), taps) for x, taps in infos],
        [core_variable(v) for v in non_seqs], None if steps is None else core_variable(steps),
        int(truncate_gradient), bool(go_backwards), name or "scan_fn", bool(strict))
    twins = builder.step_args
    given = [None] * (len(twins) - len(non_seqs)) + non_seqs
    args = [_step_variable(t, g) for t, g in zip(twins, given)]
    outputs, updates, cond = _step_results(fn(*args))
    updates = [(k, as_tensor_variable(v)) for k, v in updates.items()]
    out_twins, update_twins, _ = builder.finish(
        [core_variable(o) for o in outputs],
        [(core_variable(k), core_variable(v)) for k, v in updates],
        None if cond is None else core_variable(cond))
    # The loop as client variables, over the client's own: the outer graph reads the arguments
    # and the shared variables the step reads (leaves of the step's graph).
    known = [x for x, _ in seqs] + [x for x, _ in infos if x is not None] + non_seqs
    known += ([steps] if steps is not None else []) + outputs + [v for _, v in updates]
    known += [k for k, _ in updates] + ([cond] if cond is not None else [])
    values = variables_of(out_twins + [v for _, v in update_twins], known)
    outs, new_values = values[:len(out_twins)], values[len(out_twins):]
    result_updates = OrderedUpdates((k, v) for (k, _), v in zip(updates, new_values))
    if return_list:
        return outs, result_updates
    if not outs:
        return None, result_updates
    return (outs[0] if len(outs) == 1 else outs), result_updates


def map(fn, sequences, non_sequences=None, truncate_gradient=-1, go_backwards=False, mode=None,
        name=None):
    """Aesara's map: fn applied to the rows of the sequences."""
    return scan(fn, sequences=sequences, outputs_info=None, non_sequences=non_sequences,
                truncate_gradient=truncate_gradient, go_backwards=go_backwards, mode=mode,
                name=name)


def reduce(fn, sequences, outputs_info, non_sequences=None, go_backwards=False, mode=None,
           name=None):
    """Aesara's reduce: fn folded over the sequences; (final values, updates)."""
    outs, updates = scan(fn, sequences=sequences, outputs_info=outputs_info,
                         non_sequences=non_sequences, go_backwards=go_backwards, mode=mode,
                         name=name, return_list=True)
    finals = [o[-1] for o in outs]
    if not finals:
        return None, updates
    return (finals[0] if len(finals) == 1 else finals), updates


def foldl(fn, sequences, outputs_info, non_sequences=None, mode=None, name=None):
    """Aesara's foldl: reduce from the first row."""
    return reduce(fn, sequences, outputs_info, non_sequences, False, mode, name)


def foldr(fn, sequences, outputs_info, non_sequences=None, mode=None, name=None):
    """Aesara's foldr: reduce from the last row."""
    return reduce(fn, sequences, outputs_info, non_sequences, True, mode, name)


