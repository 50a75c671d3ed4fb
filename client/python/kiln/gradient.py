"""kiln.gradient: grad, Lop, Rop, jacobian, hessian and verify_grad. The derivatives are
computed in this process by core's reverse mode (kiln._core.grad, core/grad/gradient.h), as the
server's Grad computes them for thin clients; the results are graphs over the caller's
variables, sharing their nodes."""
import warnings

import numpy as np

from kiln.errors import KilnError
from kiln import ops
from kiln.graph.utils import CoreError, register_core_error, typed_core_error
from kiln.graph.null_type import DisconnectedType, NullType  # noqa: F401 (Aesara's names here)
from kiln.graph import (TensorType, _core, clone_replace, compile_function_or_raise,
                        core_variable)
from kiln.tensor.basic import as_tensor_variable, fill, zeros_like
from kiln.tensor.from_core import variables_of
from kiln.tensor.reduce import sum as ksum
from kiln.tensor.variable import SparseOperand


class GradientError(Exception):
    """verify_grad found the symbolic and the numeric gradient apart."""

    def __init__(self, arg, err_pos, shape, val1, val2, abs_err, rel_err, abs_tol, rel_tol):
        super().__init__(
            "GradientError: numeric gradient and analytic gradient exceed tolerance:\n"
            "        At position %d of argument %d with shape %s,\n"
            "            val1 = %f      ,  val2 = %f\n"
            "            abs. error = %f,  abs. tolerance = %f\n"
            "            rel. error = %f,  rel. tolerance = %f"
            % (err_pos, arg, shape, val1, val2, abs_err, abs_tol, rel_err, rel_tol))
        self.arg, self.err_pos, self.abs_err, self.rel_err = arg, err_pos, abs_err, rel_err


def _differentiate(wrt, cost=None, consider_constant=(), known_grads=(),
                   disconnected_inputs="raise", return_disconnected="zero",
                   null_gradients="raise", jacobian=False):
    """The gradients of cost (or, with jacobian, the Jacobians of the vector cost) with respect
    to wrt, made by core in this process, as variables over the caller's graph. Core's errors
    are KilnError with the status code the server's Grad answers (INVALID_ARGUMENT...)."""
    if disconnected_inputs is None:
        disconnected_inputs = "raise"
    if disconnected_inputs not in ("raise", "warn", "ignore"):
        raise ValueError("disconnected_inputs %r: expected raise, warn or ignore"
                         % (disconnected_inputs,))
    wrt = list(wrt)
    consider_constant = list(consider_constant)
    known_grads = list(known_grads)
    try:
        twins, messages = _core.grad(
            None if cost is None else core_variable(cost), [core_variable(w) for w in wrt],
            [core_variable(v) for v in consider_constant],
            [(core_variable(v), core_variable(g)) for v, g in known_grads],
            disconnected_inputs, return_disconnected, null_gradients, jacobian)
    except _core.CallError as e:
        raise typed_core_error(*e.args) from None
    for message in messages:
        warnings.warn(message)
    roots = ([cost] if cost is not None else []) + wrt + consider_constant
    return variables_of(twins, roots + [v for pair in known_grads for v in pair])


def _data_of(v):
    """The tensor grad differentiates for v: a sparse variable's data, a tensor itself."""
    return v.parts.data if isinstance(v, SparseOperand) else v


def grad(cost, wrt, consider_constant=None, disconnected_inputs="raise", known_grads=None,
         return_disconnected="zero", null_gradients="raise", add_names=True):
    """Aesara's grad: the gradient of the scalar cost with respect to wrt (a variable, or a
    list or tuple of them: then a list or tuple of gradients), summed over every path.
    return_disconnected ("zero", "None" or "Disconnected") is what a variable the cost does not
    depend on gets when disconnected_inputs lets it through; null_gradients="return" returns
    an undefined (NullType) gradient instead of raising. The gradient with respect to a sparse
    variable (kiln.sparse) is the sparse matrix of its structure whose entries are the
    gradients of its stored entries (Aesara's structured gradient)."""
    single = not isinstance(wrt, (list, tuple))
    wrt_list = [wrt] if single else list(wrt)
    if isinstance(cost, SparseOperand):
        raise TypeError("Cost must be a scalar.")
    if cost is not None:
        cost = as_tensor_variable(cost)
    known = list(known_grads.items()) if isinstance(known_grads, dict) else list(known_grads or [])
    # A sparse variable is differentiated through its data (the structured gradient).
    out = _differentiate([_data_of(w) for w in wrt_list], cost,
                         [_data_of(v) for v in consider_constant or []],
                         [(_data_of(v), as_tensor_variable(_data_of(g))) for v, g in known],
                         disconnected_inputs, return_disconnected, null_gradients)
    out = [w.with_data(g) if isinstance(w, SparseOperand) and g is not None else g
           for w, g in zip(wrt_list, out)]
    if add_names and cost is not None and cost.name:
        for w, g in zip(wrt_list, out):
            if g is not None and w.name and g.name is None:
                g.name = "(d%s/d%s)" % (cost.name, w.name)
    if single:
        return out[0]
    return tuple(out) if isinstance(wrt, tuple) else out


def Lop(f, wrt, eval_points, consider_constant=None, disconnected_inputs="raise"):
    """The vector-Jacobian product eval_points^T (df/dwrt)."""
    fs = f if isinstance(f, (list, tuple)) else [f]
    evs = eval_points if isinstance(eval_points, (list, tuple)) else [eval_points]
    single = not isinstance(wrt, (list, tuple))
    out = grad(None, [wrt] if single else list(wrt), consider_constant=consider_constant,
               disconnected_inputs=disconnected_inputs, known_grads=list(zip(fs, evs)))
    return out[0] if single else out


def Rop(f, wrt, eval_points, use_op_rop_implementation=False):
    """The Jacobian-vector product (df/dwrt) eval_points, by differentiating a Lop again.
    use_op_rop_implementation (PyTensor's) asks for each op's own R_op; Kiln's ops have none,
    and the Lop graph computes the same product, so it is what either choice gives."""
    single_f = not isinstance(f, (list, tuple))
    fs = [f] if single_f else list(f)
    wrts = wrt if isinstance(wrt, (list, tuple)) else [wrt]
    evs = eval_points if isinstance(eval_points, (list, tuple)) else [eval_points]
    us = [o.type("u%d" % i) for i, o in enumerate(fs)]
    g = Lop(fs, list(wrts), us)
    out = Lop(g, us, list(evs), disconnected_inputs="ignore")
    # The product is linear in u, so its derivative does not depend on u's value; a graph may
    # still read u (the reverse loop of a Scan's gradient does): u = 0 there.
    out = [r if r is None else clone_replace([r], [(u, zeros_like(f_)) for u, f_ in
                                                   zip(us, fs)])[0] for r in out]
    # Each result has its f's shape; filled to f, its graph reads what f reads, as Aesara's
    # R_op graphs do (so function() finds every input the product was taken through).
    out = [r if r is None else fill(f_, r) for f_, r in zip(fs, out)]
    return out[0] if single_f else out


def hessian_vector_product(cost, wrt, p, **grad_kwargs):
    """PyTensor's hessian_vector_product: (d^2 cost / dwrt^2) p, as grad(sum(grad(cost, wrt) *
    p), wrt) (lists of wrt and p give a list)."""
    single = not isinstance(wrt, (list, tuple))
    wrts = [wrt] if single else list(wrt)
    ps = [p] if single else list(p)
    gs = grad(cost, wrts, **grad_kwargs)
    inner = ksum(gs[0] * ps[0])
    for g, q in zip(gs[1:], ps[1:]):
        inner = inner + ksum(g * q)
    out = grad(inner, wrts, **grad_kwargs)
    return out[0] if single else out


def jacobian(expression, wrt, consider_constant=None, disconnected_inputs="raise"):
    """The Jacobian of a vector expression of any length with respect to wrt, of shape
    (len(expression),) + wrt.shape: core runs one backward pass batched over the expression's
    elements (PyTensor's vectorize=True), so the result is an ordinary graph."""
    expression = as_tensor_variable(expression)
    single = not isinstance(wrt, (list, tuple))
    wrts = [wrt] if single else list(wrt)
    if expression.ndim == 0:
        out = grad(expression, wrts, consider_constant, disconnected_inputs)
        return out[0] if single else out
    if expression.ndim != 1:
        raise ValueError("jacobian expects a 1 dimensional variable as `expression`. If not use "
                         "flatten to make it a vector")
    out = _differentiate(wrts, expression, list(consider_constant or []), (),
                         disconnected_inputs, jacobian=True)
    return out[0] if single else out


def hessian(cost, wrt, consider_constant=None, disconnected_inputs="raise"):
    """The Hessian of a scalar cost with respect to vectors of any length: the Jacobian of its
    gradient."""
    cost = as_tensor_variable(cost)
    if cost.ndim != 0:
        raise ValueError("hessian expects a 0 dimensional variable as `cost`")
    single = not isinstance(wrt, (list, tuple))
    wrts = [wrt] if single else list(wrt)
    for w in wrts:
        if w.ndim != 1:
            raise ValueError("hessian expects a (list of) 1 dimensional variable as `wrt`")
    out = [jacobian(grad(cost, w, consider_constant, disconnected_inputs), w,
                    consider_constant, "ignore") for w in wrts]
    return out[0] if single else out


def verify_grad(fun, pt, n_tests=2, rng=None, eps=None, out_type=None, abs_tol=None,
                rel_tol=None, mode=None, cast_to_output_type=False, no_debug_ref=True):
    """Aesara's verify_grad: checks the server's gradient of sum(t * fun(*pt)), t random,
    against central finite differences; raises GradientError when they differ."""
    function = compile_function_or_raise()
    rng = rng or np.random.default_rng(42)
    pt = [np.array(p) for p in pt]
    for p in pt:
        if p.dtype.kind != "f":
            raise TypeError("verify_grad can work only with floating point inputs, got %s"
                            % p.dtype)
    eps = eps or (1e-7 if all(p.dtype == np.float64 for p in pt) else 3e-4)
    abs_tol = abs_tol or (1e-4 if eps < 1e-6 else 1e-2)
    rel_tol = rel_tol or (1e-4 if eps < 1e-6 else 1e-2)
    xs = [TensorType(p.dtype.name, (None,) * p.ndim)("input%d" % i) for i, p in enumerate(pt)]
    y = as_tensor_variable(fun(*xs))
    f_y = function(xs, y)
    for _ in range(n_tests):
        t = rng.random(np.shape(f_y(*pt))).astype(y.dtype)
        cost = ksum(y * t)
        f_cost = function(xs, cost)
        f_grad = function(xs, grad(cost, xs, disconnected_inputs="ignore"))
        analytic = f_grad(*pt)
        for k, p in enumerate(pt):
            numeric = np.zeros_like(p, dtype=np.float64)
            flat = p.reshape(-1)
            for j in range(flat.size):
                orig = flat[j]
                flat[j] = orig + eps
                up = float(f_cost(*pt))
                flat[j] = orig - eps
                down = float(f_cost(*pt))
                flat[j] = orig
                numeric.reshape(-1)[j] = (up - down) / (2 * eps)
            a = np.asarray(analytic[k], dtype=np.float64)
            abs_err = np.abs(a - numeric)
            rel_err = abs_err / np.maximum(np.abs(a) + np.abs(numeric), 1e-8)
            bad = np.argmax(np.minimum(abs_err - abs_tol, rel_err - rel_tol).reshape(-1))
            if (abs_err > abs_tol).reshape(-1)[bad] and (rel_err > rel_tol).reshape(-1)[bad]:
                raise GradientError(k, int(bad), p.shape, a.reshape(-1)[bad],
                                    numeric.reshape(-1)[bad], abs_err.reshape(-1)[bad],
                                    rel_err.reshape(-1)[bad], abs_tol, rel_tol)


# --- ops that change only the gradient ------------------------------------------------------------

_GRADIENT_MODES = {"consider_constant": 0, "zero_grad": 1, "undefined_grad": 2,
                   "disconnected_grad": 3, "grad_clip": 4, "grad_scale": 5}


def _gradient_op(mode, x, a=0.0, b=0.0):
    return ops.GradientOp(_GRADIENT_MODES[mode], float(a), float(b))(x)


def consider_constant(x):
    """x, through which grad does not go (its gradient is zero)."""
    return _gradient_op("consider_constant", x)


def zero_grad(x):
    """x, whose gradient is zero."""
    return _gradient_op("zero_grad", x)


def undefined_grad(x):
    """x, whose gradient is undefined: grad through it raises."""
    return _gradient_op("undefined_grad", x)


def disconnected_grad(x):
    """x, disconnected from the cost for grad."""
    return _gradient_op("disconnected_grad", x)


def grad_clip(x, lower_bound, upper_bound):
    """x, whose gradient is clipped to [lower_bound, upper_bound]."""
    return _gradient_op("grad_clip", x, lower_bound, upper_bound)


def grad_scale(x, multiplier):
    """x, whose gradient is multiplied by `multiplier`."""
    return _gradient_op("grad_scale", x, multiplier)


# --- Aesara's exceptions of aesara.gradient -----------------------------------------------------
# Core raises them in this process (kiln._core.grad), its messages starting as Aesara's; they
# are also KilnErrors with core's status code (INVALID_ARGUMENT).

@register_core_error("DisconnectedInputError: ")
class DisconnectedInputError(CoreError, ValueError):
    """grad was asked for the gradient with respect to a variable the cost does not depend
    on, with disconnected_inputs="raise" (the default)."""


@register_core_error("`grad` encountered a NaN.")
class NullTypeGradError(CoreError, TypeError):
    """A gradient on the path is undefined (NullType), with null_gradients="raise"."""


def grad_not_implemented(op, x_pos, x, comment=""):
    """Aesara's marker for an op input with no gradient, used in Python ops' grad methods;
    Kiln's gradients are core's rules: the ops of kiln.ops have theirs."""
    raise NotImplementedError("grad_not_implemented: Kiln's gradients are core's rules "
                              "(core/ops); a Python op's grad method does not run in Kiln")


grad_undefined = grad_not_implemented
