"""kiln.scan.utils: Aesara's aesara.scan.utils.until."""


class until:
    """A step function returns until(condition) (alone or with its outputs and updates) to stop
    the loop after the step where the condition is true."""

    def __init__(self, condition):
        from kiln.tensor.basic import as_tensor_variable
        self.condition = as_tensor_variable(condition)
        if self.condition.ndim != 0:
            raise TypeError("The condition of scan's until must be a scalar, not %s"
                            % (self.condition.type,))
