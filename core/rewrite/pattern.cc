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

Pattern Any(VariablePtr* bind) {
  return Pattern([bind](const VariablePtr& v) {
    if (bind != nullptr) *bind = v;
    return true;
  });
}

Pattern Const(double value) {
  return Pattern([value](const VariablePtr& v) {
    const std::optional<double> c = ScalarConstantValue(*v);
    return c && *c == value;
  });
}

Pattern AnyConst(double* value) {
  return Pattern([value](const VariablePtr& v) {
    const std::optional<double> c = ScalarConstantValue(*v);
    if (!c) return false;
    if (value != nullptr) *value = *c;
    return true;
  });
}

Pattern Op(ScalarOpKind kind, std::vector<Pattern> args, Apply** node) {
  return Pattern([kind, args = std::move(args), node](const VariablePtr& v) {
    if (ElemwiseKind(*v) != kind) return false;
    Apply* owner = v->owner();
    if (owner->num_inputs() != static_cast<int>(args.size())) return false;
    auto in_order = [&](bool swapped) {
      for (size_t i = 0; i < args.size(); ++i) {
        const size_t j = swapped ? args.size() - 1 - i : i;
        if (!args[i].Match(owner->inputs()[j])) return false;
      }
      return true;
    };
    const bool commutative = ScalarOpAlgebra(kind).commutative && args.size() == 2;
    if (!in_order(false) && !(commutative && in_order(true))) return false;
    if (node != nullptr) *node = owner;
    return true;
  });
}

}  // namespace m
}  // namespace kiln
