// Aesara's dedicated ops of aesara.tensor.nnet.basic for classifiers: the softmax of x + b, the
// cross-entropy of a softmax against integer labels (with its gradient op), and the categorical
// cross-entropy of a distribution against integer labels (with its gradient op).
#ifndef KILN_CORE_OPS_NNET_XENT_H_
#define KILN_CORE_OPS_NNET_XENT_H_

#include <vector>

#include "core/graph/op_decl.h"
#include "core/graph/var.h"

namespace kiln {

// SoftmaxWithBias(x, b): softmax(x + b) row by row, for a float matrix x and a float vector b of
// one entry per column; x's type.
class SoftmaxWithBias final : public DeclaredOp<SoftmaxWithBias, NoAttrs> {
 public:
  KILN_DECLARED_OP("SoftmaxWithBias")
};

// CrossentropySoftmaxArgmax1HotWithBias(x, b, y_idx): for each row i of x + b, the negative
// log-likelihood -log(softmax(x[i] + b)[y_idx[i]]) (computed from the row's maximum, finite for
// large rows), the softmax, and the row's argmax (y_idx's type).
class CrossentropySoftmaxArgmax1HotWithBias final
    : public DeclaredOp<CrossentropySoftmaxArgmax1HotWithBias, NoAttrs> {
 public:
  KILN_DECLARED_OP("CrossentropySoftmaxArgmax1HotWithBias")
  // y_idx reaches only the argmax.
  std::vector<std::vector<bool>> ConnectionPattern(const Apply&) const override {
    return {{true, true, true}, {true, true, true}, {false, false, true}};
  }
};

// CrossentropySoftmax1HotWithBiasDx(dy, sm, y_idx): the gradient of that cross-entropy w.r.t. x,
// dy[i] * (sm[i] - onehot(y_idx[i])); dy a scalar or a vector of one entry (broadcast) or one
// per row.
class CrossentropySoftmax1HotWithBiasDx final
    : public DeclaredOp<CrossentropySoftmax1HotWithBiasDx, NoAttrs> {
 public:
  KILN_DECLARED_OP("CrossentropySoftmax1HotWithBiasDx")
};

// CrossentropyCategorical1Hot(coding_dist, true_one_of_n): -log(coding_dist[i, true_one_of_n[i]])
// for each row i of a float matrix.
class CrossentropyCategorical1Hot final : public DeclaredOp<CrossentropyCategorical1Hot, NoAttrs> {
 public:
  KILN_DECLARED_OP("CrossentropyCategorical1Hot")
};

// CrossentropyCategorical1HotGrad(g_y, coding_dist, true_one_of_n): zeros like coding_dist
// but -g_y[i] / coding_dist[i, true_one_of_n[i]] at each row's label.
class CrossentropyCategorical1HotGrad final
    : public DeclaredOp<CrossentropyCategorical1HotGrad, NoAttrs> {
 public:
  KILN_DECLARED_OP("CrossentropyCategorical1HotGrad")
};

// Aesara's functions of the same names (aesara.tensor.nnet).
Var softmax_with_bias(const Var& x, const Var& b);
// {nll, softmax, argmax}.
std::vector<Var> crossentropy_softmax_argmax_1hot_with_bias(const Var& x, const Var& b,
                                                            const Var& y_idx);
// {nll, softmax}: the first two outputs of the op above.
std::vector<Var> crossentropy_softmax_1hot_with_bias(const Var& x, const Var& b, const Var& y_idx);
// The same with b = zeros_like(x[0, :]).
std::vector<Var> crossentropy_softmax_1hot(const Var& x, const Var& y_idx);
Var crossentropy_softmax_1hot_with_bias_dx(const Var& dy, const Var& sm, const Var& y_idx);
Var crossentropy_categorical_1hot(const Var& coding_dist, const Var& true_one_of_n);
Var crossentropy_categorical_1hot_grad(const Var& g_y, const Var& coding_dist,
                                       const Var& true_one_of_n);

}  // namespace kiln

#endif  // KILN_CORE_OPS_NNET_XENT_H_
