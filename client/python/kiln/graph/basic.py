"""kiln.graph.basic (Aesara's aesara.graph.basic): the graph's classes and the functions that
walk, compare and copy graphs. They read the Python graph (each node's op, inputs and
outputs); a copy's nodes are made again by their ops, so core types them as it types any
node."""
from collections import deque

import numpy as np

from kiln.graph import (Apply, Constant, Op, TensorType, Variable, ancestors,  # noqa: F401
                        clone_replace, graph_inputs)
from kiln.graph import io_toposort as _io_toposort
from kiln.graph.utils import MethodNotDefined, TestValueError, add_tag_trace  # noqa: F401

__all__ = ["Apply", "Variable", "Constant", "ancestors", "graph_inputs", "io_toposort",
           "clone_replace", "clone", "clone_get_equiv", "applys_between", "vars_between",
           "orphans_between", "walk", "equal_computations", "is_in_ancestors", "list_of_nodes",
           "general_toposort", "get_var_by_name"]


def io_toposort(inputs, outputs, orderings=None, clients=None):
    """Aesara's io_toposort(inputs, outputs): the Apply nodes between inputs and outputs, each
    after the nodes computing its inputs. (kiln.graph.io_toposort takes (outputs, blockers).)"""
    if orderings:
        raise NotImplementedError("io_toposort: Kiln's graphs have no extra orderings")
    return _io_toposort(list(outputs), list(inputs))


def walk(nodes, expand, bfs=True, return_children=False, hash_fn=id):
    """Each node reachable from `nodes` through expand(node) (an iterable of next nodes, or
    None), once, breadth first (depth first with bfs=False); (node, children) pairs with
    return_children. A generator, as Aesara's."""
    nodes = deque(nodes)
    seen = set()
    pop = nodes.popleft if bfs else nodes.pop
    while nodes:
        node = pop()
        key = hash_fn(node)
        if key in seen:
            continue
        seen.add(key)
        children = expand(node)
        yield (node, children) if return_children else node
        if children:
            nodes.extend(children)


def vars_between(ins, outs):
    """The variables of the graph between ins and outs (both included): a generator."""
    stop = {id(i) for i in ins}

    def expand(v):
        if v.owner is not None and id(v) not in stop:
            return list(reversed(v.owner.inputs + v.owner.outputs))
        return None
    yield from walk(outs, expand)


def orphans_between(ins, outs):
    """The variables outs depend on that are neither computed nor in ins (constants, inputs
    ins leaves out): a generator."""
    stop = {id(i) for i in ins}
    for v in vars_between(ins, outs):
        if v.owner is None and id(v) not in stop:
            yield v


def applys_between(ins, outs):
    """The Apply nodes between ins and outs: a generator."""
    stop = {id(i) for i in ins}
    return (v.owner for v in vars_between(ins, outs) if v.owner is not None
            and id(v) not in stop)


def is_in_ancestors(l_apply, f_apply):
    """Whether the Apply node f_apply is l_apply or one of the nodes it depends on."""
    for v in ancestors(l_apply.inputs):
        if v.owner is f_apply:
            return True
    return l_apply is f_apply


def list_of_nodes(inputs, outputs):
    """The Apply nodes computing outputs from inputs, walking back until a node computes one
    of the inputs."""
    stop = {id(i) for i in inputs}
    return list(walk([o.owner for o in outputs if o.owner is not None],
                     lambda node: [i.owner for i in node.inputs if i.owner is not None
                                   and not any(id(o) in stop for o in i.owner.outputs)]))


def general_toposort(outputs, deps, compute_deps_cache=None, deps_cache=None, clients=None):
    """Every node reachable from outputs through deps(node) (the nodes it needs), each after
    the nodes it needs; ValueError on a cycle."""
    deps = deps or compute_deps_cache
    order, state = [], {}
    for root in outputs:
        stack = [(root, False)]
        while stack:
            node, done = stack.pop()
            if done:
                state[id(node)] = 2
                order.append(node)
                continue
            s = state.get(id(node))
            if s == 2:
                continue
            if s == 1:
                raise ValueError("graph contains cycles")
            state[id(node)] = 1
            stack.append((node, True))
            for d in reversed(list(deps(node) or ())):
                if state.get(id(d)) == 1:
                    raise ValueError("graph contains cycles")
                if state.get(id(d)) != 2:
                    stack.append((d, False))
    return order


def _same_constant(x, y):
    a, b = np.asarray(x.data), np.asarray(y.data)
    return x.type == y.type and a.shape == b.shape and a.tobytes() == b.tobytes()


def equal_computations(xs, ys, in_xs=None, in_ys=None, strict_dtype=True):
    """Whether the graphs of xs and ys compute the same thing: equal ops on equal inputs, the
    same constants (by value), and the same leaves (in_xs[i] standing for in_ys[i])."""
    xs, ys = list(xs), list(ys)
    if len(xs) != len(ys):
        raise ValueError("The number of graphs/inputs doesn't match.")
    in_xs, in_ys = list(in_xs or []), list(in_ys or [])
    if len(in_xs) != len(in_ys):
        raise ValueError("The number of inputs doesn't match.")
    memo = {id(a): b for a, b in zip(in_xs, in_ys)}
    done = {}

    def same(x, y):
        key = (id(x), id(y))
        if key in done:
            return done[key]
        if id(x) in memo:
            result = memo[id(x)] is y
        elif id(y) in {id(b) for b in in_ys}:
            result = False
        elif isinstance(x, Constant) or isinstance(y, Constant):
            result = (isinstance(x, Constant) and isinstance(y, Constant)
                      and _same_constant(x, y))
        elif x.owner is None or y.owner is None:
            result = x is y
        else:
            result = (x.type == y.type and x.index == y.index and x.owner.op == y.owner.op
                      and len(x.owner.inputs) == len(y.owner.inputs)
                      and all(same(a, b) for a, b in zip(x.owner.inputs, y.owner.inputs)))
        done[key] = result
        return result
    return all(same(x, y) for x, y in zip(xs, ys))


def _copy_leaf(v):
    """A new variable of v's type and name (a constant: of its data too). A shared variable is
    itself: its value lives in the session under its identity."""
    if isinstance(v, Constant):
        return type(v)(v.type, v.data, name=v.name)
    if hasattr(v, "get_value"):
        return v
    return type(v)(v.type, name=v.name)


def clone_get_equiv(inputs, outputs, copy_inputs=True, copy_orphans=True, memo=None,
                    clone_inner_graphs=False, **kwargs):
    """{old: new} for the variables and Apply nodes between inputs and outputs, in a copy of
    the graph: inputs (and, with copy_orphans, the other leaves) copied when copy_inputs,
    every node made again by its op."""
    memo = {} if memo is None else memo
    for v in inputs:
        if v not in memo:
            memo[v] = _copy_leaf(v) if copy_inputs else v
    for node in io_toposort(inputs, outputs):
        for i in node.inputs:
            if i not in memo:
                memo[i] = _copy_leaf(i) if copy_orphans else i
        new = node.op.make_node(*[memo[i] for i in node.inputs])
        memo[node] = new
        for old, out in zip(node.outputs, new.outputs):
            out.name = old.name
            memo[old] = out
    for o in outputs:
        if o not in memo:
            memo[o] = _copy_leaf(o) if copy_orphans else o
    return memo


def clone(inputs, outputs, copy_inputs=True, copy_orphans=None, clone_inner_graphs=False):
    """(new inputs, new outputs): a copy of the graph between inputs and outputs; the leaves
    not in inputs are copied too when copy_orphans (by default, when copy_inputs)."""
    if copy_orphans is None:
        copy_orphans = copy_inputs
    equiv = clone_get_equiv(inputs, outputs, copy_inputs, copy_orphans)
    return [equiv[i] for i in inputs], [equiv[o] for o in outputs]


def get_var_by_name(graphs, target_var_id, ids="CHAR"):
    """The variables of the graphs named target_var_id, as a tuple."""
    return tuple(v for v in ancestors(graphs) if v.name == target_var_id)
