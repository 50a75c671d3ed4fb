// Rewrites of IfElse (Aesara's): a constant condition or identical branches remove it, an inner
// IfElse on the same condition is decided, and cheap ops move into the branches.
#ifndef KILN_CORE_PASSES_BRANCHES_H_
#define KILN_CORE_PASSES_BRANCHES_H_

#include <vector>

#include "core/rewrite/rewriter.h"

namespace kiln {

// The canonicalize rules on IfElse.
std::vector<RewriteRule> BranchRules();

}  // namespace kiln

#endif  // KILN_CORE_PASSES_BRANCHES_H_
