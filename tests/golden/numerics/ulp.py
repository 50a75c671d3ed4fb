"""Units in the last place: the error measure of the numerics corpus and its accuracy table."""
import math

import numpy as np


def ulp_error(got, want, dtype):
    """|got - want| in units in the last place of want in dtype: 0 for equal values (infinities
    included), inf where got is not finite and want is, nan where want is nan (not measured)."""
    if math.isnan(want):
        return math.nan
    if got == want:
        return 0.0
    if not math.isfinite(got) or not math.isfinite(want):
        return math.inf
    return abs(got - want) / float(np.spacing(np.dtype(dtype).type(abs(want))))


def round_to(v, dtype):
    """The double v rounded to dtype, as a double (overflow to inf)."""
    with np.errstate(over="ignore"):
        return float(np.dtype(dtype).type(v))
