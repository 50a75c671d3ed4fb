#include "core/tensor/tensor_format.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/tensor/dtype_dispatch.h"
#include "core/tensor/tensor.h"

namespace kiln {
namespace {

// Shortest round-trip digits of a float of type T, in std::to_chars' format `fmt`.
template <typename T>
std::string ShortestChars(T value, std::chars_format fmt) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), value, fmt);
  return std::string(buf, r.ptr);
}

// Shortest digits that round-trip through `T` (float16 searches precisions, others use to_chars).
template <typename T>
std::string Shortest(T value, std::chars_format fmt) {
  if constexpr (std::is_same_v<T, Eigen::half>) {
    const float f = static_cast<float>(value);
    for (int precision = 1; precision < 12; ++precision) {
      char buf[64];
      auto r = std::to_chars(buf, buf + sizeof(buf), f, fmt, precision);
      std::string s(buf, r.ptr);
      if (static_cast<float>(Eigen::half(std::stof(s))) == f) return s;
    }
    return ShortestChars(f, fmt);
  } else {
    return ShortestChars(value, fmt);
  }
}

// Rewrites to_chars' exponent ("e+05", "e-05", "e100") into Python's ("e+05" stays, "e100" ->
// "e+100") and ensures a mantissa point when `point` ("1e+10" -> "1.e+10").
std::string PythonExponent(std::string s, bool point) {
  size_t e = s.find('e');
  if (e == std::string::npos) return s;
  std::string mantissa = s.substr(0, e);
  std::string_view exp = std::string_view(s).substr(e + 1);
  char sign = '+';
  if (!exp.empty() && (exp[0] == '+' || exp[0] == '-')) {
    sign = exp[0];
    exp.remove_prefix(1);
  }
  std::string digits(exp);
  if (digits.size() < 2) digits.insert(0, 2 - digits.size(), '0');
  if (point && mantissa.find('.') == std::string::npos) mantissa += '.';
  return absl::StrCat(mantissa, "e", std::string(1, sign), digits);
}

template <typename T>
std::string ScalarFloat(T value) {
  const double v = static_cast<double>(value);
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  const double a = std::fabs(v);
  if (a != 0 && (a < 1e-4 || a >= 1e16)) {
    return PythonExponent(Shortest(value, std::chars_format::scientific), false);
  }
  std::string s = Shortest(value, std::chars_format::fixed);
  if (s.find('.') == std::string::npos) s += ".0";
  return s;
}

// An array element in NumPy's positional mode: at most 8 fractional digits, "1." for integers.
template <typename T>
std::string ArrayFloat(T value, bool scientific) {
  const double v = static_cast<double>(value);
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (scientific) return PythonExponent(Shortest(value, std::chars_format::scientific), true);
  std::string s = Shortest(value, std::chars_format::fixed);
  size_t dot = s.find('.');
  if (dot != std::string::npos && s.size() - dot - 1 > 8) {
    char buf[400];
    auto r = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::fixed, 8);
    s.assign(buf, r.ptr);
    while (s.back() == '0') s.pop_back();
    dot = s.find('.');
  }
  if (dot == std::string::npos) s += '.';
  return s;
}

template <typename T>
std::string ScalarText(const T& value) {
  if constexpr (std::is_same_v<T, bool>) {
    return value ? "True" : "False";
  } else if constexpr (IsComplexType<T>::value) {
    return absl::StrCat("(", ScalarFloat(value.real()), value.imag() < 0 ? "" : "+",
                        ScalarFloat(value.imag()), "j)");
  } else if constexpr (std::is_unsigned_v<T>) {
    return absl::StrCat(static_cast<uint64_t>(value));
  } else if constexpr (std::is_integral_v<T>) {
    return absl::StrCat(static_cast<int64_t>(value));
  } else {
    return ScalarFloat(value);
  }
}

// Element strings of a contiguous tensor, padded to NumPy's common width.
template <typename T>
std::vector<std::string> ArrayElements(const T* data, int64_t n) {
  std::vector<std::string> out;
  out.reserve(n);
  if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, Eigen::half>) {
    double max_abs = 0, min_abs = INFINITY;
    for (int64_t i = 0; i < n; ++i) {
      double a = std::fabs(static_cast<double>(data[i]));
      if (!std::isfinite(a)) continue;
      max_abs = std::max(max_abs, a);
      if (a > 0) min_abs = std::min(min_abs, a);
    }
    const bool scientific =
        max_abs >= 1e8 || (min_abs < INFINITY && (min_abs < 1e-4 || max_abs / min_abs > 1e3));
    size_t left = 0, right = 0;
    for (int64_t i = 0; i < n; ++i) {
      out.push_back(ArrayFloat(data[i], scientific));
      size_t dot = out.back().find('.');
      if (dot == std::string::npos || scientific) continue;
      left = std::max(left, dot);
      right = std::max(right, out.back().size() - dot - 1);
    }
    if (!scientific) {
      for (std::string& s : out) {
        size_t dot = s.find('.');
        if (dot == std::string::npos) continue;  // nan, inf: aligned below
        s.append(right - (s.size() - dot - 1), ' ');
        s.insert(0, left - std::min(left, dot), ' ');
      }
    }
  } else if constexpr (std::is_same_v<T, bool>) {
    for (int64_t i = 0; i < n; ++i) out.push_back(data[i] ? " True" : "False");
    return out;
  } else {
    for (int64_t i = 0; i < n; ++i) out.push_back(ScalarText(data[i]));
  }
  size_t width = 0;
  for (const std::string& s : out) width = std::max(width, s.size());
  for (std::string& s : out) s.insert(0, width - s.size(), ' ');
  return out;
}

// Joins elements [begin, ...) of dimension `dim` into NumPy's nested bracket layout.
void AppendNested(const std::vector<std::string>& elems, const Shape& shape, int dim, int64_t* next,
                  std::string* out) {
  const int ndim = static_cast<int>(shape.size());
  out->push_back('[');
  for (int64_t i = 0; i < shape[dim]; ++i) {
    if (dim == ndim - 1) {
      if (i > 0) out->push_back(' ');
      out->append(elems[(*next)++]);
    } else {
      if (i > 0) {
        out->append(ndim - dim - 1, '\n');
        out->append(dim + 1, ' ');
      }
      AppendNested(elems, shape, dim + 1, next, out);
    }
  }
  out->push_back(']');
}

}  // namespace

std::string FormatPythonFloat(double value) { return ScalarFloat(value); }

std::string FormatTensor(const Tensor& tensor) {
  const Tensor t = tensor.Contiguous();
  return DispatchDType(t.dtype(), [&](auto tag) -> std::string {
    using T = typename decltype(tag)::type;
    const T* data = t.data<T>();
    if (t.ndim() == 0) return ScalarText(data[0]);
    std::vector<std::string> elems = ArrayElements(data, t.size());
    std::string out;
    int64_t next = 0;
    AppendNested(elems, t.shape(), 0, &next, &out);
    return out;
  });
}

}  // namespace kiln
