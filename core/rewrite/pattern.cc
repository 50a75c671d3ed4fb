#include "core/rewrite/pattern.h"

#include "core/graph/op.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/elemwise.h"

namespace kiln {

std::optional<double> ScalarConstantValue(const Variable& v) {
  if (v.is_constant()) {
    const Tensor& t = static_cast<const Constant&>(v).data();
    if (t.size() == 0 || IsComplex(t.dtype())) return std::nullopt;
    const double first = t.ElementAsDouble(0);
    for (int64_t i = 1; i < t.size(); ++i) {
      const double e = t.ElementAsDouble(i);
      if (!(e == first) && !(e != e && first != first)) return std::nullopt;
    }
    return first;
  }
  const Apply* node = v.owner();
  if (node == nullptr) return std::nullopt;
  if (node->op().kind() == OpKind::kDimShuffle) return ScalarConstantValue(*node->inputs()[0]);
  if (ElemwiseKind(v) == ScalarOpKind::kSecond) return ScalarConstantValue(*node->inputs()[1]);
  return std::nullopt;
}

std::optional<ScalarOpKind> ElemwiseKind(const Variable& v) {
  const Apply* node = v.owner();
  if (node == nullptr || node->op().kind() != OpKind::kElemwise) return std::nullopt;
  return static_cast<const Elemwise&>(node->op()).scalar_op().kind;
}

namespace m {

bool Const::Match(const VariablePtr& v) const {
  const std::optional<double> c = ScalarConstantValue(*v);
  return c && *c == value_;
}

bool AnyConst::Match(const VariablePtr& v) const {
  const std::optional<double> c = ScalarConstantValue(*v);
  if (!c) return false;
  if (value_ != nullptr) *value_ = *c;
  return true;
}

}  // namespace m
}  // namespace kiln
