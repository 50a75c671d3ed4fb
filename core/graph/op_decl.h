// An op declared once: a struct of its attributes with a field list (Aesara's __props__), from
// which DeclaredOp derives the printed name, the wire attributes, construction from the wire and
// so equality and hashing (Op::Key). See core/ops/README.md for the steps to add an op.
//
//   struct RepeatAttrs {
//     std::optional<int> axis;
//     static constexpr auto Fields() { return std::tuple{AttrField{"axis", &RepeatAttrs::axis}}; }
//   };
//   class Repeat final : public DeclaredOp<Repeat, RepeatAttrs> {
//    public:
//     KILN_DECLARED_OP("Repeat")  // Aesara's class name; MakeNode, InferShape, Perform, LOp
//   };
//   KILN_REGISTER_OP(Repeat);  // in repeat.cc
#ifndef KILN_CORE_GRAPH_OP_DECL_H_
#define KILN_CORE_GRAPH_OP_DECL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "core/graph/attr_codec.h"
#include "core/tensor/dtype.h"
#include "core/graph/op.h"
#include "core/graph/op_attrs.h"

namespace kiln {

// One attribute of a declared op: its name (on the wire and in the printed name) and its member.
template <typename A, typename T>
struct AttrField {
  absl::string_view name;
  T A::*member;
};
// (Clang 14 does not deduce an aggregate's template arguments by itself.)
template <typename A, typename T>
AttrField(absl::string_view, T A::*) -> AttrField<A, T>;

// The attribute `key` of `wire` as a T (an absent std::optional is nullopt), or INVALID_ARGUMENT.
template <typename T>
absl::StatusOr<T> DecodeAttr(const OpAttrs& wire, absl::string_view key) {
  return op_decl::Codec<T>::Decode(wire, std::string(key));
}

// The attributes of an op without props.
struct NoAttrs {
  static constexpr auto Fields() { return std::tuple{}; }
};

// The attributes of an op whose one prop says whether its output overwrites input 0's buffer
// (Gemm{inplace}); the in-place pass sets it, clients leave it out.
struct InplaceAttrs {
  bool inplace = false;
  static constexpr auto Fields() {
    return std::tuple{AttrField{"inplace", &InplaceAttrs::inplace}};
  }
};

// The destroy_map of an op that overwrites input 0 with output 0 when `inplace`.
inline std::vector<std::pair<int, int>> DestroysInput0If(bool inplace) {
  if (inplace) return {{0, 0}};
  return {};
}

// OK when `value`, the attribute `name`, is a dimension count or index a tensor can have
// ([0, 64]); otherwise INVALID_ARGUMENT naming the attribute.
absl::Status CheckDimIndex(absl::string_view name, int64_t value);

// The wire attributes of `attrs`, in field order; unset optionals are left out.
template <typename A>
OpAttrs EncodeAttrs(const A& attrs) {
  OpAttrs out;
  std::apply([&](const auto&... f) { (op_decl::EncodeInto(out, f.name, attrs.*f.member), ...); },
             A::Fields());
  return out;
}

// The attributes struct from wire attributes, or INVALID_ARGUMENT naming the first bad field
// or an attribute the op does not have. A field absent from the wire keeps the struct's default
// (as a Python op's keyword argument does), so one op has one encoding: EncodeAttrs writes every
// set field, and decoding either form gives an equal op.
template <typename A>
absl::StatusOr<A> DecodeAttrs(const OpAttrs& wire) {
  for (const auto& entry : wire.values()) {
    const std::string& key = entry.first;  // (clang 14 captures no structured binding)
    bool known = false;
    std::apply([&](const auto&... f) { ((known = known || f.name == key), ...); }, A::Fields());
    if (!known) return absl::InvalidArgumentError(absl::StrCat("unknown attribute '", key, "'"));
  }
  A attrs{};
  absl::Status status;
  auto decode = [&](const auto& f) {
    if (!status.ok()) return;
    using T = std::remove_cvref_t<decltype(attrs.*f.member)>;
    if (!op_decl::kIsOptional<T> && !wire.Has(std::string(f.name))) return;
    absl::StatusOr<T> v = op_decl::Codec<T>::Decode(wire, std::string(f.name));
    if (v.ok()) {
      attrs.*f.member = *std::move(v);
    } else {
      status = v.status();
    }
  };
  std::apply([&](const auto&... f) { (decode(f), ...); }, A::Fields());
  if (status.ok()) status = op_decl::CheckAttrs(attrs);
  if (!status.ok()) return status;
  return attrs;
}

// Aesara's default str(op): "Repeat{axis=0}", or the bare class name for an op without props.
template <typename A>
std::string AttrsName(absl::string_view type_name, const A& attrs) {
  std::vector<std::string> parts;
  std::apply(
      [&](const auto&... f) {
        (parts.push_back(absl::StrCat(
             f.name, "=",
             op_decl::Codec<std::remove_cvref_t<decltype(attrs.*f.member)>>::Repr(attrs.*
                                                                                  f.member))),
         ...);
      },
      A::Fields());
  if (parts.empty()) return std::string(type_name);
  return absl::StrCat(type_name, "{", absl::StrJoin(parts, ", "), "}");
}

// The four methods every op defines (type, shape, kernel, gradient), declared in its class body:
// MakeNode, InferShape, Perform and LOp (the gradient rule, Aesara's L_op, in the *_grad.cc).
// Declared ops get them from KILN_DECLARED_OP; the inner-graph ops (Scan, OpFromGraph) write it.
#define KILN_OP_METHODS                                                              \
  absl::StatusOr<ApplyPtr> MakeNode(std::vector<VariablePtr> inputs) const override; \
  absl::StatusOr<std::vector<std::vector<VariablePtr>>> InferShape(                  \
      const Apply& node, const std::vector<std::vector<VariablePtr>>& input_shapes)  \
      const override;                                                                \
  absl::Status Perform(const Apply& node, std::span<const Tensor> inputs,            \
                       std::vector<Tensor>& outputs) const override;                 \
  std::vector<Var> LOp(const Apply& node, const std::vector<Var>& output_grads) const override;

// The head of a declared op's class body: Aesara's class name, the constructor from the attributes
// struct and KILN_OP_METHODS.
//   class Repeat final : public DeclaredOp<Repeat, RepeatAttrs> {
//    public:
//     KILN_DECLARED_OP("Repeat")
//   };
#define KILN_DECLARED_OP(aesara_class_name)                         \
  static constexpr absl::string_view kTypeName = aesara_class_name; \
  using DeclaredOp::DeclaredOp;                                     \
  KILN_OP_METHODS

// The base of a declared op: `Derived` names itself (kTypeName) and computes; `A` holds what
// tells two of its ops apart.
template <typename Derived, typename A>
class DeclaredOp : public OpOf<Derived> {
 public:
  using Attributes = A;
  explicit DeclaredOp(A attrs = {}) : attrs_(std::move(attrs)) {}
  const A& attrs() const { return attrs_; }

  std::string Name() const override { return AttrsName(Derived::kTypeName, attrs_); }
  OpAttrs Attrs() const final { return EncodeAttrs(attrs_); }

  // The op from its wire attributes (the registry's factory, see KILN_REGISTER_OP).
  static absl::StatusOr<OpPtr> FromAttrs(const OpAttrs& wire) {
    absl::StatusOr<A> attrs = DecodeAttrs<A>(wire);
    if (!attrs.ok()) return attrs.status();
    return OpPtr(std::make_shared<Derived>(*std::move(attrs)));
  }

 private:
  A attrs_;
};

}  // namespace kiln

#endif  // KILN_CORE_GRAPH_OP_DECL_H_
