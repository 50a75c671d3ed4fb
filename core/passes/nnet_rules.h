// Aesara's specializations of aesara.tensor.nnet's classifier graphs: softmax(x + b) becomes
// SoftmaxWithBias, the categorical cross-entropy of a softmax becomes
// CrossentropySoftmaxArgmax1HotWithBias, and argmax looks through monotonic functions.
#ifndef KILN_CORE_PASSES_NNET_RULES_H_
#define KILN_CORE_PASSES_NNET_RULES_H_

#include <vector>

#include "core/rewrite/rewriter.h"

namespace kiln {

// local_softmax_with_bias, crossentropy_to_crossentropy_with_softmax,
// graph_merge_softmax_with_crossentropy_softmax,
// local_softmax_grad_to_crossentropy_with_softmax_grad,
// local_useless_crossentropy_softmax_1hot_with_bias_dx_alloc and local_argmax_pushdown
// ("specialize").
std::vector<RewriteRule> NnetRules();

}  // namespace kiln

#endif  // KILN_CORE_PASSES_NNET_RULES_H_
