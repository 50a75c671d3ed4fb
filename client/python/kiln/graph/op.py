"""kiln.graph.op (Aesara's aesara.graph.op): Op, the class of every op. Kiln's ops are core's,
each a class of kiln.ops generated from core's field list (kiln.ops.Alloc, kiln.ops.Dot...):
an op is its class plus its props, and core makes its nodes. An Op written in Python (its own
perform or C code) cannot run in Kiln: build it from Kiln's ops as an OpFromGraph
(kiln.compile.builders) instead."""
import abc

from kiln import ops
from kiln.graph import Apply, Op, Variable  # noqa: F401
from kiln.graph.standin import C_CODE, TEST_VALUES, unsupported, unsupported_class
from kiln.graph.utils import MethodNotDefined, TestValueError, add_tag_trace  # noqa: F401
from kiln.graph.utils import get_variable_trace_string  # noqa: F401

__all__ = ["Op", "Apply", "Variable", "HasInnerGraph", "MethodNotDefined", "get_test_value",
           "compute_test_value"]


class HasInnerGraph(abc.ABC):
    """Aesara's mark of an op with an inner graph: Kiln's Scan and OpFromGraph."""


HasInnerGraph.register(ops.Scan)
HasInnerGraph.register(ops.OpFromGraph)


get_test_value = unsupported("get_test_value", TEST_VALUES)
get_test_values = unsupported("get_test_values", TEST_VALUES)
compute_test_value = unsupported("compute_test_value", TEST_VALUES)
missing_test_message = unsupported("missing_test_message", TEST_VALUES)
ParamsType = unsupported_class("ParamsType", C_CODE)
Params = unsupported_class("Params", C_CODE)
