"""kiln.graph.rewriting.utils (Aesara's aesara.graph.rewriting.utils): rewrite_graph, a
stand-in (kiln.function compiles with the server's rewrites; kiln.dprint(f) shows the
result)."""
from kiln.graph.standin import REWRITES, unsupported

rewrite_graph = unsupported("rewrite_graph", REWRITES)
__all__ = ["rewrite_graph"]
