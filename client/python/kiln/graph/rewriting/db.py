"""kiln.graph.rewriting.db (Aesara's aesara.graph.rewriting.db): stand-ins for Aesara's rewrite
databases. Kiln's phases (merge, canonicalize, stabilize, specialize, fusion, inplace) are
core's; a mode's optimizer names which run (kiln.Mode(optimizer="fast_run"))."""
from kiln.graph.standin import REWRITES, unsupported_class

_CLASSES = ["RewriteDatabase", "RewriteDatabaseQuery", "EquilibriumDB", "SequenceDB",
            "LocalGroupDB", "TopoDB", "ProxyDB"]
globals().update({name: unsupported_class(name, REWRITES) for name in _CLASSES})
__all__ = list(_CLASSES)
