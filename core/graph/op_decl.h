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
//     static constexpr absl::string_view kTypeName = "Repeat";
//     using DeclaredOp::DeclaredOp;
//     ... MakeNode, InferShape, Perform, LOp ...
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
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "core/graph/dtype.h"
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

namespace op_decl {

// How one attribute type travels on the wire (an AttrValue) and prints (Python's repr).
template <typename T>
struct Codec;

template <>
struct Codec<int64_t> {
  static AttrValue Encode(int64_t v) { return v; }
  static absl::StatusOr<int64_t> Decode(const OpAttrs& a, const std::string& key) {
    return a.Int(key);
  }
  static std::string Repr(int64_t v) { return absl::StrCat(v); }
};

template <>
struct Codec<int> {
  static AttrValue Encode(int v) { return int64_t{v}; }
  static absl::StatusOr<int> Decode(const OpAttrs& a, const std::string& key) {
    absl::StatusOr<int64_t> v = a.Int(key);
    if (!v.ok()) return v.status();
    if (*v < -(int64_t{1} << 30) || *v > (int64_t{1} << 30)) {
      return absl::InvalidArgumentError(absl::StrCat("attribute '", key, "' is out of range"));
    }
    return static_cast<int>(*v);
  }
  static std::string Repr(int v) { return absl::StrCat(v); }
};

template <>
struct Codec<bool> {
  static AttrValue Encode(bool v) { return int64_t{v}; }
  static absl::StatusOr<bool> Decode(const OpAttrs& a, const std::string& key) {
    absl::StatusOr<int64_t> v = a.Int(key);
    if (!v.ok()) return v.status();
    return *v != 0;
  }
  static std::string Repr(bool v) { return v ? "True" : "False"; }
};

template <>
struct Codec<double> {
  static AttrValue Encode(double v) { return v; }
  static absl::StatusOr<double> Decode(const OpAttrs& a, const std::string& key) {
    return a.Double(key);
  }
  static std::string Repr(double v) { return absl::StrCat(v); }
};

template <>
struct Codec<std::string> {
  static AttrValue Encode(const std::string& v) { return v; }
  static absl::StatusOr<std::string> Decode(const OpAttrs& a, const std::string& key) {
    return a.String(key);
  }
  static std::string Repr(const std::string& v) { return absl::StrCat("'", v, "'"); }
};

template <>
struct Codec<DType> {
  static AttrValue Encode(DType v) { return DTypeName(v); }
  static absl::StatusOr<DType> Decode(const OpAttrs& a, const std::string& key) {
    absl::StatusOr<std::string> name = a.String(key);
    if (!name.ok()) return name.status();
    std::optional<DType> d = ParseDType(*name);
    if (!d) return absl::InvalidArgumentError(absl::StrCat("unknown dtype '", *name, "'"));
    return *d;
  }
  static std::string Repr(DType v) { return absl::StrCat("'", DTypeName(v), "'"); }
};

// An enum travels as its integer; its attributes struct's Check() bounds it.
template <typename E>
requires std::is_enum_v<E>
struct Codec<E> {
  static AttrValue Encode(E v) { return static_cast<int64_t>(v); }
  static absl::StatusOr<E> Decode(const OpAttrs& a, const std::string& key) {
    absl::StatusOr<int64_t> v = a.Int(key);
    if (!v.ok()) return v.status();
    if (*v < 0 || *v > 1024) {
      return absl::InvalidArgumentError(absl::StrCat("attribute '", key, "' is out of range"));
    }
    return static_cast<E>(*v);
  }
  static std::string Repr(E v) { return absl::StrCat(static_cast<int64_t>(v)); }
};

template <typename I>
requires std::is_same_v<I, int> || std::is_same_v<I, int64_t>
struct Codec<std::vector<I>> {
  static AttrValue Encode(const std::vector<I>& v) {
    return std::vector<int64_t>(v.begin(), v.end());
  }
  static absl::StatusOr<std::vector<I>> Decode(const OpAttrs& a, const std::string& key) {
    absl::StatusOr<std::vector<int64_t>> v = a.Ints(key);
    if (!v.ok()) return v.status();
    return std::vector<I>(v->begin(), v->end());
  }
  // A tuple, as Python prints one: (1,) and (0, 2).
  static std::string Repr(const std::vector<I>& v) {
    return absl::StrCat("(", absl::StrJoin(v, ", "), v.size() == 1 ? ",)" : ")");
  }
};

// An optional attribute is absent from the wire when unset, and prints as None.
template <typename T>
struct Codec<std::optional<T>> {
  static absl::StatusOr<std::optional<T>> Decode(const OpAttrs& a, const std::string& key) {
    if (!a.Has(key)) return std::optional<T>();
    absl::StatusOr<T> v = Codec<T>::Decode(a, key);
    if (!v.ok()) return v.status();
    return std::optional<T>(*std::move(v));
  }
  static std::string Repr(const std::optional<T>& v) { return v ? Codec<T>::Repr(*v) : "None"; }
};

template <typename T>
void EncodeInto(OpAttrs& out, absl::string_view name, const T& v) {
  out.Set(std::string(name), Codec<T>::Encode(v));
}
template <typename T>
void EncodeInto(OpAttrs& out, absl::string_view name, const std::optional<T>& v) {
  if (v) out.Set(std::string(name), Codec<T>::Encode(*v));
}

// A checked attributes struct may declare `absl::Status Check() const`; others are always valid.
template <typename A>
absl::Status CheckAttrs(const A& attrs) {
  if constexpr (requires { attrs.Check(); }) {
    return attrs.Check();
  } else {
    return absl::OkStatus();
  }
}

}  // namespace op_decl

// The attribute `key` of `wire` as a T (an absent std::optional is nullopt), or INVALID_ARGUMENT.
template <typename T>
absl::StatusOr<T> DecodeAttr(const OpAttrs& wire, absl::string_view key) {
  return op_decl::Codec<T>::Decode(wire, std::string(key));
}

// The attributes of an op without props.
struct NoAttrs {
  static constexpr auto Fields() { return std::tuple{}; }
};

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
// or an attribute the op does not have.
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

// The base of a declared op: `Derived` names itself (kTypeName) and computes; `A` holds what
// tells two of its ops apart.
template <typename Derived, typename A>
class DeclaredOp : public Op {
 public:
  using Attributes = A;
  explicit DeclaredOp(A attrs = {}) : attrs_(std::move(attrs)) {}
  const A& attrs() const { return attrs_; }

  absl::string_view type_name() const final { return Derived::kTypeName; }
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
