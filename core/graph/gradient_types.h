// The types of the gradient placeholders, as in aesara.gradient: NullType (an undefined gradient,
// with the reason) and DisconnectedType (the cost does not depend on the variable).
#ifndef KILN_CORE_GRAPH_GRADIENT_TYPES_H_
#define KILN_CORE_GRAPH_GRADIENT_TYPES_H_

#include <string>
#include <string_view>

#include "core/graph/basic.h"
#include "core/graph/type.h"
#include "core/graph/var.h"

namespace kiln {

// The type of an undefined gradient; why_null says why.
class NullType final : public Type {
 public:
  explicit NullType(std::string why_null) : why_null_(std::move(why_null)) {}
  const std::string& why_null() const { return why_null_; }
  std::string ToString() const override { return "NullType"; }
  bool Equals(const Type& other) const override;
  size_t Hash() const override;

 private:
  std::string why_null_;
};

// The type of the gradient of a variable the cost does not depend on.
class DisconnectedType final : public Type {
 public:
  std::string ToString() const override { return "DisconnectedType"; }
  bool Equals(const Type& other) const override;
  size_t Hash() const override { return 0x6469736dULL; }
};

// A fresh variable of NullType(why_null) / DisconnectedType.
Var null_type(std::string why_null);
Var disconnected_type();

// The NullType of a variable whose type is NullType, else nullptr.
const NullType* AsNullType(const Variable& v);
bool IsNullType(const Variable& v);
bool IsDisconnected(const Variable& v);

// Aesara's grad_undefined: the gradient for input x_pos (x) of op is mathematically undefined.
Var grad_undefined(std::string_view op_name, int x_pos, const VariablePtr& x,
                   std::string_view comment = "");
// Aesara's grad_not_implemented: nobody has written that gradient yet.
Var grad_not_implemented(std::string_view op_name, int x_pos, const VariablePtr& x,
                         std::string_view comment = "");

}  // namespace kiln

#endif  // KILN_CORE_GRAPH_GRADIENT_TYPES_H_
