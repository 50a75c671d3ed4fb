"""The OpFromGraph override programs whose results tests/golden/aesara_ofg_overrides.json holds:
each function takes a namespace `A` of Aesara's API (A.function, A.grad, A.Rop, A.at,
A.OpFromGraph, A.NullType, A.DisconnectedType and the two gradient errors) and returns a dict of
named results (lists of arrays, printed names, or "ErrorClass: message" strings). The generator
(tests/golden/gen_aesara_ofg_overrides.py) runs them with Aesara 2.9.4; the test
(tests/python/test_op_from_graph_overrides.py) runs the same code with Kiln."""
import numpy as np

X = np.array([0.5, 1.0, -2.0])
Y = np.array([1.5, -0.5, 2.0])
U = np.array([1.0, -1.0, 0.5])
V = np.array([2.0, 0.25, -3.0])


def _error(fn):
    try:
        fn()
    except Exception as e:  # the class and the first line, which the test compares
        return "%s: %s" % (type(e).__name__, str(e).split("\n")[0].strip())
    return "no error"


def docstring_grad_overrides_list(A):
    """Aesara's docstring example 3: grad_overrides=['default', rescale_dy, 'default']."""
    x, y, z = A.at.dscalars("x", "y", "z")

    def rescale_dy(inps, grads):
        x, y, z = inps
        (g,) = grads
        return z * 2

    op = A.OpFromGraph([x, y, z], [x + y * z], grad_overrides=["default", rescale_dy, "default"])
    dx, dy, dz = A.grad(op(x, y, z), [x, y, z])
    return {"grads": [np.asarray(v) for v in A.function([x, y, z], [dx, dy, dz])(2.0, 3.0, 4.0)]}


def lop_overrides_callable(A):
    """lop_overrides as a function of (inputs, outputs, output_grads): the gradient op is
    "<name>_lop"."""
    x, y = A.at.dvectors("x", "y")

    def lop(inps, outs, grads):
        return [grads[0] * outs[0] * 2, grads[0] * inps[0]]

    op = A.OpFromGraph([x, y], [x * y + A.at.exp(x)], lop_overrides=lop, name="myop")
    out = op(x, y)
    g = A.grad((out * A.at.constant(U)).sum(), [x, y])
    return {"grads": A.function([x, y], g)(X, Y), "name": str(g[0].owner.op)}


def grad_overrides_callable_named(A):
    """grad_overrides as a function of (inputs, output_grads), two outputs."""
    x, y = A.at.dvectors("x", "y")

    def override(inps, grads):
        return [grads[0] * 3 + grads[1], grads[0] * inps[1] - grads[1]]

    op = A.OpFromGraph([x, y], [x * y, x - y], grad_overrides=override, name="pair")
    a, b = op(x, y)
    g = A.grad((a * A.at.constant(U)).sum() + (b * A.at.constant(V)).sum(), [x, y])
    return {"grads": A.function([x, y], g)(X, Y), "name": str(g[0].owner.op)}


def grad_overrides_opfromgraph(A):
    """grad_overrides given as an OpFromGraph of (inputs, output_grads)."""
    x, y, g = A.at.dvectors("x", "y", "g")
    gop = A.OpFromGraph([x, y, g], [g * y * 2, g * x * 3])
    op = A.OpFromGraph([x, y], [x * y], grad_overrides=gop)
    grads = A.grad((op(x, y) * A.at.constant(U)).sum(), [x, y])
    return {"grads": A.function([x, y], grads)(X, Y)}


def lop_disconnected_entry(A):
    """lop_overrides=['default', DisconnectedType()()]: y is disconnected (grad raises for it,
    ignore gives zeros) and the connection pattern says so."""
    x, y = A.at.dvectors("x", "y")
    op = A.OpFromGraph([x, y], [x * y + A.at.exp(x)],
                       lop_overrides=["default", A.DisconnectedType()()])
    out = op(x, y)
    cost = (out * A.at.constant(U)).sum()
    gx, gy = A.grad(cost, [x, y], disconnected_inputs="ignore")
    return {"grads": A.function([x, y], [gx, gy])(X, Y),
            "pattern": [[bool(c) for c in row] for row in op.connection_pattern(out.owner)],
            "raise": _error(lambda: A.grad(cost, [x, y]))}


def lop_null_entry(A):
    """lop_overrides=['default', NullType()()]: the gradient for x is defined, y's raises."""
    x, y = A.at.dvectors("x", "y")
    op = A.OpFromGraph([x, y], [x * y + A.at.exp(x)],
                       lop_overrides=["default", A.NullType()()])
    cost = (op(x, y) * A.at.constant(U)).sum()
    return {"grads": [A.function([x, y], A.grad(cost, x))(X, Y)],
            "raise": _error(lambda: A.grad(cost, y))}


def grad_null_whole(A):
    """grad_overrides=NullType()(): no input has a gradient."""
    x = A.at.dvector("x")
    op = A.OpFromGraph([x], [x * 2], grad_overrides=A.NullType()())
    return {"raise": _error(lambda: A.grad(op(x).sum(), x))}


def lop_list_with_callables(A):
    """lop_overrides list of a callable of (inputs, outputs, output_grads) and 'default'."""
    x, y = A.at.dvectors("x", "y")
    op = A.OpFromGraph([x, y], [x * y, x + y],
                       lop_overrides=[lambda i, o, g: g[0] * 10 + g[1], "default"])
    a, b = op(x, y)
    g = A.grad((a * A.at.constant(U)).sum() + (b * A.at.constant(V)).sum(), [x, y])
    return {"grads": A.function([x, y], g)(X, Y)}


def rop_callable(A):
    """rop_overrides as a function of (inputs, eval_points): Rop gives its values."""
    x, y, u, v = A.at.dvectors("x", "y", "u", "v")
    op = A.OpFromGraph([x, y], [x * y + A.at.exp(x)],
                       rop_overrides=lambda inps, evs: [evs[0] * 3 + evs[1] * inps[0]])
    r = A.Rop(op(x, y), [x, y], [u, v])
    return {"rop": [A.function([x, y, u, v], r)(X, Y, U, V)]}


def rop_list(A):
    """rop_overrides list, one entry per output: 'default' and a callable."""
    x, y, u, v = A.at.dvectors("x", "y", "u", "v")
    op = A.OpFromGraph([x, y], [x * y, A.at.sin(x) + y],
                       rop_overrides=["default", lambda inps, evs: evs[1] * 7])
    a, b = op(x, y)
    ra, rb = A.Rop([a, b], [x, y], [u, v])
    return {"rop": A.function([x, y, u, v], [ra, rb])(X, Y, U, V)}


def rop_default_and_chain(A):
    """Rop through an OpFromGraph without overrides, and through an overridden one fed by
    another expression (the eval points flow through it)."""
    x, y, u, v = A.at.dvectors("x", "y", "u", "v")
    plain = A.OpFromGraph([x, y], [x * y + A.at.exp(x)])
    over = A.OpFromGraph([x, y], [x * y],
                         rop_overrides=lambda inps, evs: [evs[0] * inps[1] * 2])
    r1 = A.Rop(plain(x, y), [x, y], [u, v])
    r2 = A.Rop(over(x ** 2, y), [x, y], [u, v])
    return {"rop": A.function([x, y, u, v], [r1, r2])(X, Y, U, V)}


def rop_with_grad_override(A):
    """Both overrides: grad uses grad_overrides, Rop uses rop_overrides."""
    x, y, u, v = A.at.dvectors("x", "y", "u", "v")
    op = A.OpFromGraph([x, y], [x * y], grad_overrides=lambda i, g: [g[0] * 2, g[0] * 3],
                       rop_overrides=lambda i, e: [e[0] * 5 + e[1] * 6])
    out = op(x, y)
    g = A.grad((out * A.at.constant(U)).sum(), [x, y])
    r = A.Rop(out, [x, y], [u, v])
    return {"grads": A.function([x, y], g)(X, Y), "rop": [A.function([x, y, u, v], r)(X, Y, U, V)]}


def connection_pattern_given(A):
    """connection_pattern given: the op reports it, and grad treats y as disconnected (its
    gradient overridden as such: Aesara asserts when a pattern and a gradient disagree)."""
    x, y = A.at.dvectors("x", "y")
    op = A.OpFromGraph([x, y], [x * 2 + y], connection_pattern=[[True], [False]],
                       grad_overrides=["default", A.DisconnectedType()()])
    out = op(x, y)
    cost = (out * A.at.constant(U)).sum()
    gx, gy = A.grad(cost, [x, y], disconnected_inputs="ignore")
    return {"pattern": [[bool(c) for c in row] for row in op.connection_pattern(out.owner)],
            "grads": A.function([x, y], [gx, gy])(X, Y),
            "raise": _error(lambda: A.grad(cost, y))}


def override_errors(A):
    """Aesara's errors for bad overrides."""
    x, y = A.at.dvectors("x", "y")
    e = x * y

    def grad_of(**kw):
        return lambda: A.grad(A.OpFromGraph([x, y], [e], **kw)(x, y).sum(), x)

    return {
        "exclusive": _error(lambda: A.OpFromGraph([x, y], [e], lop_overrides=lambda *a: [],
                                                  grad_overrides=lambda *a: [])),
        "short_list": _error(grad_of(grad_overrides=["default"])),
        "not_list": _error(grad_of(grad_overrides=lambda i, g: (g[0], g[0]))),
        "wrong_count": _error(grad_of(grad_overrides=lambda i, g: [g[0]])),
        "bad_entry": _error(grad_of(grad_overrides=["default", 3])),
    }


PROGRAMS = [docstring_grad_overrides_list, lop_overrides_callable, grad_overrides_callable_named,
            grad_overrides_opfromgraph, lop_disconnected_entry, lop_null_entry, grad_null_whole,
            lop_list_with_callables, rop_callable, rop_list, rop_default_and_chain,
            rop_with_grad_override, connection_pattern_given, override_errors]
