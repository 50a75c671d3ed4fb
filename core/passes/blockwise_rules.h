// Rewrites of Blockwise (core/ops/blockwise.h).
#ifndef KILN_CORE_PASSES_BLOCKWISE_RULES_H_
#define KILN_CORE_PASSES_BLOCKWISE_RULES_H_

#include <string>
#include <vector>

#include "core/rewrite/rewriter.h"

namespace kiln {

// local_useless_unbatched_blockwise, tagged `phase`: a Blockwise without batch dims becomes its
// core op.
std::vector<RewriteRule> BlockwiseRules(const std::string& phase);

}  // namespace kiln

#endif  // KILN_CORE_PASSES_BLOCKWISE_RULES_H_
