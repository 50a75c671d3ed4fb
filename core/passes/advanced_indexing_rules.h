// Aesara's specializations of advanced indexing: a take-like AdvancedSubtensor (one integer
// array among full slices) becomes AdvancedSubtensor1 (with DimShuffle and Reshape), and the
// matching AdvancedIncSubtensor becomes AdvancedIncSubtensor1.
#ifndef KILN_CORE_PASSES_ADVANCED_INDEXING_RULES_H_
#define KILN_CORE_PASSES_ADVANCED_INDEXING_RULES_H_

#include <vector>

#include "core/rewrite/rewriter.h"

namespace kiln {

// local_replace_AdvancedSubtensor and local_AdvancedIncSubtensor_to_AdvancedIncSubtensor1
// ("specialize").
std::vector<RewriteRule> AdvancedIndexingRules();

}  // namespace kiln

#endif  // KILN_CORE_PASSES_ADVANCED_INDEXING_RULES_H_
