"""kiln.graph.rewriting.basic (Aesara's aesara.graph.rewriting.basic): stand-ins for Aesara's
Python rewriters. Decorating a function with node_rewriter, or instantiating a rewriter,
raises NotImplementedError: Kiln's rewrites are in core."""
from kiln.graph.standin import REWRITES, unsupported, unsupported_class

node_rewriter = unsupported("node_rewriter", REWRITES)
graph_rewriter = unsupported("graph_rewriter", REWRITES)
in2out = unsupported("in2out", REWRITES)
out2in = unsupported("out2in", REWRITES)
copy_stack_trace = unsupported("copy_stack_trace", REWRITES)
check_stack_trace = unsupported("check_stack_trace", REWRITES)

_CLASSES = ["Rewriter", "GraphRewriter", "NodeRewriter", "FromFunctionGraphRewriter",
            "FromFunctionNodeRewriter", "SequentialGraphRewriter", "MergeOptimizer",
            "MergeFeature", "SequentialNodeRewriter", "SubstitutionNodeRewriter",
            "RemovalNodeRewriter", "PatternNodeRewriter", "NodeProcessingGraphRewriter",
            "WalkingGraphRewriter", "OpKeyGraphRewriter", "ChangeTracker",
            "EquilibriumGraphRewriter", "OpToRewriterTracker", "OpRemove", "OpSub",
            "PatternSub", "EquilibriumOptimizer", "TopoOptimizer", "LocalOptimizer",
            "GlobalOptimizer", "CheckStackTraceRewriter"]
globals().update({name: unsupported_class(name, REWRITES) for name in _CLASSES})
__all__ = ["node_rewriter", "graph_rewriter", "in2out", "out2in", "copy_stack_trace",
           "check_stack_trace"] + _CLASSES
