"""Prints the accuracy table of the special functions (corpus.SPECIAL, issue 37): per function
and dtype, the points measured, and the largest error in ulp against mpmath (golden.json) of
kiln, of Aesara 2.9.4 (recorded in golden.json) and of SciPy (computed here), each with the
point where it occurs. kiln's values come from a kiln-server started for the run:
    /usr/bin/python3 tests/golden/numerics/accuracy_table.py [--markdown]
(KILN_SERVER_BIN and KILN_PB_DIR as for the Python tests; build/ by default.)"""
import json
import math
import os
import sys
import warnings

import numpy as np
import scipy.special as sc

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path[:0] = [HERE, os.path.join(ROOT, "tests", "python"), os.path.join(ROOT, "client", "python")]
import corpus  # noqa: E402
from special_kiln import special_values  # noqa: E402
from ulp import ulp_error  # noqa: E402


def _logsumexp_rows(a, b, c):
    x = np.stack([a, b, c], axis=1)
    return (x - sc.logsumexp(x, axis=1, keepdims=True)).astype(a.dtype)


# SciPy's function for each name (None: none of its own).
SCIPY = {
    "gammainc": sc.gammainc, "gammaincc": sc.gammaincc, "gammaincinv": sc.gammaincinv,
    "gammainccinv": sc.gammainccinv, "betainc": sc.betainc, "betaincinv": sc.betaincinv,
    "betaln": sc.betaln, "polygamma": lambda n, x: sc.polygamma(n.astype(int), x).astype(x.dtype),
    "tri_gamma": lambda x: sc.polygamma(1, x).astype(x.dtype), "i0": sc.i0, "i1": sc.i1,
    "iv": sc.iv, "ive": sc.ive, "kv": sc.kv, "kve": sc.kve, "jv": sc.jv, "hyp2f1": sc.hyp2f1,
    "owens_t": sc.owens_t, "xlogx": lambda x: sc.xlogy(x, x), "xlogy0": sc.xlogy,
    "logit": sc.logit, "log1pexp": lambda x: np.logaddexp(0, x), "logaddexp": np.logaddexp,
    "log_softmax": _logsumexp_rows, "poch": sc.poch, "factorial": lambda n: sc.gamma(n + 1),
    "erf": sc.erf, "erfc": sc.erfc, "erfcx": sc.erfcx, "erfinv": sc.erfinv,
    "erfcinv": sc.erfcinv, "gamma": sc.gamma, "gammaln": sc.gammaln, "psi": sc.psi,
    "gammau": None, "gammal": None,
}


def scipy_values(case):
    f = SCIPY.get(case["name"])
    if f is None:
        return None
    with np.errstate(all="ignore"):
        out = f(*corpus.special_inputs(case["points"], case["dtype"]))
    return [float(np.dtype(case["dtype"]).type(v)) for v in np.ravel(out)]


def worst(case, values):
    """(largest ulp error, the point where it occurs) of values over the measured points."""
    if values is None:
        return None
    width = len(case["reference"]) // len(case["points"])
    best = (0.0, None)
    for i, (v, r) in enumerate(zip(values, case["reference"])):
        e = ulp_error(v, r, case["dtype"])
        if not math.isnan(e) and (e > best[0] or best[1] is None):
            best = (e, case["points"][i // width])
    return best


def _point(p):
    return "(%s)" % ", ".join("%.6g" % v for v in p)


def _cell(w):
    if w is None:
        return "-"
    e, p = w
    return "%s at %s" % ("inf" if math.isinf(e) else "%.3g" % e, _point(p))


def table(rows, markdown):
    head = ["function", "dtype", "points", "kiln > 8 ulp", "kiln max ulp", "Aesara 2.9.4 max ulp",
            "SciPy 1.10 max ulp"]
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
    else:
        widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()
                 for r in [head] + rows]
    return "\n".join(lines)


def main():
    warnings.simplefilter("ignore")
    with open(os.path.join(HERE, "golden.json")) as f:
        golden = json.load(f)
    from conftest import running_server
    import kiln
    rows = []
    with running_server() as address:
        kiln.config.server = address
        for case in golden["special"]:
            width = len(case["reference"]) // len(case["points"])
            measured = sum(1 for i in range(len(case["points"]))
                           if not all(math.isnan(r) for r in
                                      case["reference"][i * width:(i + 1) * width]))
            kiln_values = special_values(case)
            over = sum(1 for v, r in zip(kiln_values, case["reference"])
                       if ulp_error(v, r, case["dtype"]) > 8)
            rows.append([case["name"], case["dtype"], "%d/%d" % (measured, len(case["points"])),
                         str(over), _cell(worst(case, kiln_values)),
                         _cell(worst(case, case["aesara"])),
                         _cell(worst(case, scipy_values(case)))])
    print(table(rows, "--markdown" in sys.argv))
    print("\n(points: measured/all, a point unmeasured where mpmath's two precisions disagree or "
          "the function is undefined; kiln > 8 ulp: values further than 8 ulp from mpmath; ulp of "
          "the reference in the dtype; '-': no such function)")


if __name__ == "__main__":
    main()
