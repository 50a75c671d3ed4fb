#include "core/rewrite/pattern.h"

#include <algorithm>

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
  if (node->op().Is<DimShuffle>()) return ScalarConstantValue(*node->inputs()[0]);
  if (ElemwiseKind(v) == ScalarOpKind::kSecond) return ScalarConstantValue(*node->inputs()[1]);
  return std::nullopt;
}

std::optional<ScalarOpKind> ElemwiseKind(const Variable& v) {
  const Apply* node = v.owner();
  if (node == nullptr || !node->op().Is<Elemwise>()) return std::nullopt;
  return static_cast<const Elemwise&>(node->op()).scalar_op().kind;
}

void AddElemwiseRoot(ScalarOpKind kind, PatternRoots& roots) {
  const OpClassId elemwise = OpClassIdOf<Elemwise>();
  if (std::find(roots.classes.begin(), roots.classes.end(), elemwise) == roots.classes.end()) {
    roots.classes.push_back(elemwise);
  }
  roots.scalar_ops.push_back(kind);
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
