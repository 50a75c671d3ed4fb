"""The structure of an optimized graph from its debugprint text, Aesara's or kiln's: one
expression per output over the graph's inputs, with fused Composites expanded, names
normalised (square -> sqr, scalar_softplus -> softplus, Switch/LT -> switch/lt), DimShuffles,
casts and fills dropped, constants written c, -a as c * a (constant factors folded into one),
a - b as a + c * b,
reciprocal(a) as true_div(c, a), and the operands of add and mul flattened and sorted. Equal structures mean the same stable forms."""
import re

_LINE = re.compile(r"^((?: [| ])*)(.*?) \[id (\w+)\]")
_INFIX = {"+": "add", "-": "sub", "*": "mul", "/": "true_div", "**": "pow", "<": "lt", ">": "gt",
          "<=": "le", ">=": "ge", "==": "eq", "!=": "neq"}
_NAMES = {"square": "sqr", "inv": "reciprocal", "truedivide": "true_div", "true_divide": "true_div"}
_DROP = {"dimshuffle", "inplacedimshuffle", "cast", "identity", "specifyshape", "convert_to"}
_COMMUTATIVE = {"add", "mul"}


def _name(text):
    """The normalised name of an op or scalar op label."""
    n = text
    if n.startswith("Elemwise{"):
        n = n[len("Elemwise{"):]
    n = re.split(r"[{},\[]", n, maxsplit=1)[0] if not n.startswith("Composite{") else "composite"
    n = n.lower()
    if n.startswith("scalar_"):
        n = n[len("scalar_"):]
    if n.startswith("cast"):
        n = "cast"
    return _NAMES.get(n, n)


def _tokens(text):
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch.isspace():
            i += 1
        elif text.startswith("Composite{", i) or (ch.isalpha() and "{" in text[i:].split("(")[0]
                                                    and re.match(r"\w+\{", text[i:])):
            depth, j = 0, i
            while True:
                depth += text[j] == "{"
                depth -= text[j] == "}"
                j += 1
                if depth == 0 and text[j - 1] == "}":
                    break
            out.append(("composite" if text.startswith("Composite{", i) else "name", text[i:j]))
            i = j
        elif ch.isalpha() or ch == "_":
            m = re.match(r"[A-Za-z_]\w*", text[i:])
            out.append(("name", m.group(0)))
            i += len(m.group(0))
        elif ch.isdigit() or (ch == "." and text[i + 1:i + 2].isdigit()) or (
                ch == "-" and text[i + 1:i + 2].isdigit() and (not out or out[-1][0] == "op")):
            m = re.match(r"-?[0-9.]+(?:e[-+]?\d+)?", text[i:])  # -3.0 after ( , or an operator
            out.append(("num", m.group(0)))
            i += len(m.group(0))
        elif text[i:i + 2] in ("**", "<=", ">=", "==", "!="):
            out.append(("op", text[i:i + 2]))
            i += 2
        else:
            out.append(("op", ch))
            i += 1
    return out


class _Parser:
    """Aesara's and kiln's scalar expression text: fully parenthesised infix and calls."""

    def __init__(self, text, args):
        self.toks, self.pos, self.args = _tokens(text), 0, args

    def peek(self):
        return self.toks[self.pos] if self.pos < len(self.toks) else (None, None)

    def take(self):
        t = self.peek()
        self.pos += 1
        return t

    def expr(self):
        kind, text = self.take()
        if kind == "num":
            return "c"
        if kind == "composite":
            inner = text[len("Composite{"):-1]
            self.take()  # (
            args = self.call_args()
            return _Parser(inner, args).expr()
        if kind == "name":
            if self.peek() == ("op", "("):
                self.take()
                return _node(_name(text), self.call_args())
            m = re.fullmatch(r"i(\d+)", text)
            if m:
                return self.args[int(m.group(1))]
            return "c" if text in ("nan", "inf") else text
        if text == "(":
            if self.peek() == ("op", "-"):
                self.take()
                operand = self.expr()
                self.take()  # )
                return _node("neg", [operand])
            operands, op = [self.expr()], None
            while self.peek() != ("op", ")"):
                op = self.take()[1]
                operands.append(self.expr())
            self.take()
            return _node(_INFIX[op], operands) if op else operands[0]
        if text == "-":
            return _node("neg", [self.expr()])
        raise ValueError("unexpected %r" % text)

    def call_args(self):
        args = []
        while self.peek() != ("op", ")"):
            args.append(self.expr())
            if self.peek() == ("op", ","):
                self.take()
        self.take()
        return args


def _node(name, args):
    """name(args) in normal form."""
    if name in _DROP and len(args) == 1:
        return args[0]
    if name == "reciprocal":
        return _node("true_div", ["c", args[0]])
    if name == "second" and len(args) == 2:  # a fill: the value, broadcast
        return args[1]
    if name == "alloc":  # the value, broadcast to a shape
        return args[0]
    if name == "sub":  # a - b is a + c * b
        return _node("add", [args[0], _node("mul", ["c", args[1]])])
    if name == "neg":  # a sign is a constant factor: -a and -1 * a are one form
        return "c" if args[0] == "c" else _node("mul", ["c", args[0]])
    if name in _COMMUTATIVE:
        flat = []
        for a in args:
            flat += _split(a[len(name) + 1:-1]) if a.startswith(name + "(") else [a]
        if name == "mul":  # constant factors fold into one
            rest = [a for a in flat if a != "c"]
            flat = (["c"] if len(rest) < len(flat) else []) + rest
            if len(flat) == 1:
                return flat[0]
        args = sorted(flat)
    return "%s(%s)" % (name, ", ".join(args))


def _split(inner):
    """The top-level comma-separated operands of an argument list."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(inner):
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            out.append(inner[start:i].strip())
            start = i + 1
    out.append(inner[start:].strip())
    return out


def _composite_outputs(inner):
    """The output expressions of a Composite's text, its named shared parts ("t9=...; a, b")
    written back in place."""
    depth, split = 0, None
    for i, ch in enumerate(inner):
        depth += ch in "({"
        depth -= ch in ")}"
        if ch == ";" and depth == 0:
            split = i
    if split is None:
        return _split(inner)
    outputs = _split(inner[split + 1:])
    for definition in _split(inner[:split]):
        name, expr = definition.split("=", 1)
        outputs = [re.sub(r"\b%s\b" % re.escape(name.strip()), "(%s)" % expr, o) for o in outputs]
    return outputs


_OUTPUT = re.compile(r"^(Elemwise\{Composite\{.*\}\}(?:\[[^\]]*\])?)\.(\d+)$")


def structure(dprint_text):
    """The normal form of every output of a debugprint, one per line."""
    # id -> (label, children); a child or root is (id, output index) (a Composite of several
    # outputs prints as "Elemwise{Composite{a, b}}.1", its inputs under the first one printed).
    nodes, roots, stack = {}, [], []
    for line in dprint_text.splitlines():
        m = _LINE.match(line)
        if not m:
            continue
        depth, label, ident = len(m.group(1)) // 2, m.group(2), m.group(3)
        out = _OUTPUT.match(label)
        index = int(out.group(2)) if out else 0
        if out:
            label = out.group(1)
        if ident not in nodes:
            nodes[ident] = (label, [])
        del stack[depth:]
        if depth == 0:
            roots.append((ident, index))
        else:
            nodes[stack[-1]][1].append((ident, index))
        stack.append(ident)
    memo = {}

    def norm(ref):
        if ref in memo:
            return memo[ref]
        ident, index = ref
        label, children = nodes[ident]
        args = [norm(c) for c in children]
        if label.startswith("TensorConstant") or label.startswith("ScalarConstant"):
            r = "c"
        elif label.startswith("Elemwise{Composite{"):
            inner = label[len("Elemwise{Composite{"):label.rindex("}}")]
            r = _Parser(_composite_outputs(inner)[index], args).expr()
        elif not children:
            r = label.split(" ")[0]
        else:
            r = _node(_name(label), args)
        memo[ref] = r
        return r

    return "\n".join(norm(r) for r in roots)
