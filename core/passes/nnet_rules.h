// Aesara's specializations of aesara.tensor.nnet's classifier graphs: softmax(x + b) becomes
// SoftmaxWithBias, the categorical cross-entropy of a softmax becomes
// CrossentropySoftmaxArgmax1HotWithBias, and argmax looks through monotonic functions.
#ifndef KILN_CORE_PASSES_NNET_RULES_H_
#define KILN_CORE_PASSES_NNET_RULES_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/graph/var.h"
#include "core/rewrite/rewriter.h"

namespace kiln {

// local_softmax_with_bias, crossentropy_to_crossentropy_with_softmax,
// graph_merge_softmax_with_crossentropy_softmax,
// local_softmax_grad_to_crossentropy_with_softmax_grad,
// local_useless_crossentropy_softmax_1hot_with_bias_dx_alloc, local_argmax_pushdown, and the
// NnetAdvancedIndexingRules below ("specialize").
std::vector<RewriteRule> NnetRules();

// local_advanced_indexing_crossentropy_onehot and local_advanced_indexing_crossentropy_onehot_grad
// (core/passes/nnet_xent_rules.cc): -log(softmax(x))[arange(y.shape[0]), y] and its gradient.
std::vector<RewriteRule> NnetAdvancedIndexingRules();

// local_abstract_batch_norm_train, local_abstract_batch_norm_train_grad and
// local_abstract_batch_norm_inference (core/passes/batchnorm_rules.cc), tagged `phase`: the
// abstract batch-normalization ops as elementwise graphs.
std::vector<RewriteRule> BatchNormRules(const std::string& phase);

// The (x, b) of a row softmax's input z = x + b, b a row vector broadcast over the rows (vector
// terms added into b, the others into x), as local_softmax_with_bias splits it; nullopt when z
// is not a matrix sum with a vector term.
std::optional<std::pair<Var, Var>> SplitSoftmaxBias(const VariablePtr& z);

}  // namespace kiln

#endif  // KILN_CORE_PASSES_NNET_RULES_H_
