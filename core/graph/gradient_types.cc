#include "core/graph/gradient_types.h"

#include <memory>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"

namespace kiln {

bool NullType::Equals(const Type& other) const {
  const auto* o = dynamic_cast<const NullType*>(&other);
  return o != nullptr && o->why_null_ == why_null_;
}

size_t NullType::Hash() const { return absl::HashOf(std::string("NullType"), why_null_); }

bool DisconnectedType::Equals(const Type& other) const {
  return dynamic_cast<const DisconnectedType*>(&other) != nullptr;
}

Var null_type(std::string why_null) {
  return Var(Variable::Make(std::make_shared<NullType>(std::move(why_null))));
}

Var disconnected_type() { return Var(Variable::Make(std::make_shared<DisconnectedType>())); }

const NullType* AsNullType(const Variable& v) {
  return dynamic_cast<const NullType*>(v.type().get());
}

bool IsNullType(const Variable& v) { return AsNullType(v) != nullptr; }

bool IsDisconnected(const Variable& v) {
  return dynamic_cast<const DisconnectedType*>(v.type().get()) != nullptr;
}

Var grad_undefined(std::string_view op_name, int x_pos, const VariablePtr& x,
                   std::string_view comment) {
  return null_type(absl::StrCat(
      "This variable is Null because the grad method for input ", x_pos, " (", x->ToString(),
      ") of the ", absl::string_view(op_name.data(), op_name.size()),
      " op is mathematically undefined. ", absl::string_view(comment.data(), comment.size())));
}

Var grad_not_implemented(std::string_view op_name, int x_pos, const VariablePtr& x,
                         std::string_view comment) {
  return null_type(
      absl::StrCat("This variable is Null because the grad method for input ", x_pos, " (",
                   x->ToString(), ") of the ", absl::string_view(op_name.data(), op_name.size()),
                   " op is not implemented. ", absl::string_view(comment.data(), comment.size())));
}

}  // namespace kiln
