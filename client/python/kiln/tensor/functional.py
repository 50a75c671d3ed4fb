"""kiln.tensor.functional (PyTensor's pytensor.tensor.functional): vectorize."""
from kiln.graph.replace import vectorize_graph

__all__ = ["vectorize"]


def vectorize(func, signature=None):
    """PyTensor's vectorize (numpy.vectorize for graphs): func, written for inputs with the core
    dims of `signature` ("(m,n),(n)->(m)"; every input a scalar when None), applied to inputs
    with any leading batch dims by batching the graph it builds (vectorize_graph)."""
    from kiln.tensor.blockwise import _parse_gufunc_signature
    from kiln.tensor.variable import TensorVariable

    def inner(*inputs):
        if signature is None:
            inputs_sig = [()] * len(inputs)
        else:
            inputs_sig, outputs_sig = _parse_gufunc_signature(signature)
            if len(inputs) != len(inputs_sig):
                raise ValueError(f"Number of inputs does not match signature: {signature}")
        core_inputs = []
        for inp, sig in zip(inputs, inputs_sig):
            if not isinstance(inp, TensorVariable):
                raise TypeError(
                    f"Inputs to vectorize function must be TensorVariable, got {type(inp)}")
            if inp.ndim < len(sig):
                raise ValueError(f"Input {inp} has less dimensions than signature {sig}")
            core_shape = inp.type.shape[-len(sig):] if len(sig) else ()
            core_inputs.append(inp.type.clone(shape=core_shape)(name=inp.name))
        core_outputs = func(*core_inputs)
        if core_outputs is None:
            raise ValueError("vectorize function returned no outputs")
        if signature is not None:
            n = len(core_outputs) if isinstance(core_outputs, (list, tuple)) else 1
            if n != len(outputs_sig):
                raise ValueError(
                    f"Number of outputs does not match signature: {signature}. "
                    f"Function returned {n} outputs but signature has {len(outputs_sig)}")
        return vectorize_graph(core_outputs, replace=list(zip(core_inputs, inputs)))

    return inner
