// How each attribute type of a declared op (core/graph/op_decl.h) travels on the wire (an
// AttrValue), comes back from it, and prints (as Python's repr, for Aesara's op names).
#ifndef KILN_CORE_GRAPH_ATTR_CODEC_H_
#define KILN_CORE_GRAPH_ATTR_CODEC_H_

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "core/tensor/dtype.h"
#include "core/graph/op_attrs.h"

namespace kiln {

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

// Whether T is a std::optional (absent on the wire means None, not the field's default).
template <typename T>
inline constexpr bool kIsOptional = false;
template <typename T>
inline constexpr bool kIsOptional<std::optional<T>> = true;

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

}  // namespace kiln

#endif  // KILN_CORE_GRAPH_ATTR_CODEC_H_
