"""kiln.tensor.var (Aesara's aesara.tensor.var): the classes of tensor variables and constants
(written in kiln.tensor.variable)."""
from kiln.graph import Constant, Variable  # noqa: F401
from kiln.graph import TensorType  # noqa: F401
from kiln.tensor.basic import as_tensor_variable  # noqa: F401
from kiln.tensor.exceptions import AdvancedIndexingError  # noqa: F401
from kiln.tensor.variable import TensorConstant, TensorVariable

# Aesara's dense classes are its TensorVariable and TensorConstant.
DenseTensorVariable = TensorVariable
DenseTensorConstant = TensorConstant

__all__ = ["TensorVariable", "TensorConstant", "DenseTensorVariable", "DenseTensorConstant",
           "AdvancedIndexingError"]
