// Rewrites of IfElse (Aesara's cond_remove_constant and cond_merge_identical branches).
#ifndef KILN_CORE_PASSES_BRANCHES_H_
#define KILN_CORE_PASSES_BRANCHES_H_

#include <vector>

#include "core/rewrite/rewriter.h"

namespace kiln {

// The canonicalize rules on IfElse.
std::vector<RewriteRule> BranchRules();

}  // namespace kiln

#endif  // KILN_CORE_PASSES_BRANCHES_H_
