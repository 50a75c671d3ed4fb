// Rewrites of the linear-algebra ops (core/ops/nlinalg.h, slinalg.h), on the plain ops and on
// their Blockwise forms: PyTensor 2.34's pytensor/tensor/rewriting/linalg.py and Aesara 2.9.4's
// aesara/sandbox/linalg/ops.py, and Kiln's own where the issue asks for more.
#ifndef KILN_CORE_PASSES_LINALG_RULES_H_
#define KILN_CORE_PASSES_LINALG_RULES_H_

#include <string>
#include <vector>

#include "core/rewrite/rewriter.h"

namespace kiln {

// The linear-algebra rules PyTensor registers in `phase` ("canonicalize", "stabilize" or
// "specialize"), each tagged with it.
std::vector<RewriteRule> LinalgRules(const std::string& phase);

}  // namespace kiln

#endif  // KILN_CORE_PASSES_LINALG_RULES_H_
