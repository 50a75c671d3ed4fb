"""kiln.graph.rewriting (Aesara's aesara.graph.rewriting): stand-ins. Kiln's rewrites are core's
(core/rewrite, core/passes), run by the server when it compiles; Aesara's Python rewriters and
rewrite databases exist here by name only, and using one says so."""
from kiln.graph.rewriting.basic import graph_rewriter, node_rewriter  # noqa: F401
from kiln.graph.rewriting.db import RewriteDatabaseQuery  # noqa: F401
from kiln.graph.rewriting.utils import rewrite_graph  # noqa: F401
