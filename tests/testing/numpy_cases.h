// Reading the NumPy reference files written by tests/golden/gen_numpy_cases.py.
#ifndef KILN_TESTS_TESTING_NUMPY_CASES_H_
#define KILN_TESTS_TESTING_NUMPY_CASES_H_

#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "core/tensor/dtype.h"
#include "core/graph/type.h"
#include "core/tensor/tensor.h"
#include "tests/testing/golden.h"

namespace kiln::testing {

// The '|'-separated fields of each non-comment line of a reference file.
inline std::vector<std::vector<std::string>> ReadCases(const std::string& path) {
  std::vector<std::vector<std::string>> cases;
  std::istringstream text(ReadSourceFile(path));
  std::string line;
  while (std::getline(text, line)) {
    if (line.empty() || line[0] == '#') continue;
    cases.push_back(absl::StrSplit(line, '|'));
  }
  return cases;
}

// The type shape Aesara gives a value: its size-1 dims broadcastable (static 1), the others
// unknown.
inline StaticShape BroadcastableShape(const Tensor& t) {
  StaticShape shape;
  for (int64_t d : t.shape()) shape.push_back(d == 1 ? StaticDim(1) : std::nullopt);
  return shape;
}

// "2x3" -> {2, 3}; "-" -> {} (a scalar).
inline Shape ParseShape(const std::string& text) {
  Shape shape;
  if (text == "-") return shape;
  for (const auto& d : absl::StrSplit(text, 'x')) shape.push_back(std::stoll(std::string(d)));
  return shape;
}

// "1.5,nan,True" -> {1.5, NaN, 1}.
inline std::vector<double> ParseValues(const std::string& text) {
  std::vector<double> values;
  if (text.empty()) return values;
  for (const auto& v : absl::StrSplit(text, ',')) {
    std::string s(v);
    values.push_back(s == "True" ? 1.0 : s == "False" ? 0.0 : std::strtod(s.c_str(), nullptr));
  }
  return values;
}

// A tensor of `dtype` and `shape` holding `values` (complex ones written "re;im").
inline Tensor MakeTensor(const std::string& dtype, const std::string& shape,
                         const std::string& values) {
  const DType d = *ParseDType(dtype);
  if (!IsComplex(d)) {
    std::vector<double> v = ParseValues(values);
    return *Tensor::FromValues<double>(d, ParseShape(shape), v);
  }
  std::vector<double> parts = ParseValues(absl::StrReplaceAll(values, {{";", ","}}));
  Tensor t = Tensor::Empty(DType::kComplex128, ParseShape(shape));
  if (!parts.empty()) std::memcpy(t.raw_data(), parts.data(), parts.size() * sizeof(double));
  return t.AsType(d);
}

// The elements of `t` as doubles, two per element (real, imaginary) when complex.
inline std::vector<double> Elements(const Tensor& t) {
  std::vector<double> out;
  if (IsComplex(t.dtype())) {
    const Tensor c = t.AsType(DType::kComplex128);
    const double* p = static_cast<const double*>(c.raw_data());
    out.assign(p, p + 2 * c.size());
  } else {
    for (int64_t i = 0; i < t.size(); ++i) out.push_back(t.ElementAsDouble(i));
  }
  return out;
}

// The same values as t in a non-contiguous layout (a transposed buffer).
inline Tensor NonContiguous(const Tensor& t) {
  Shape reversed(t.shape().rbegin(), t.shape().rend());
  std::vector<int64_t> rstrides(t.strides().rbegin(), t.strides().rend());
  Tensor buffer = t.View(reversed, rstrides).Contiguous();
  std::vector<int64_t> strides(buffer.strides().rbegin(), buffer.strides().rend());
  return buffer.View(t.shape(), strides);
}

// A tensor of `dtype` and `shape` whose i-th element is f(i).
template <typename F>
Tensor Filled(DType dtype, Shape shape, F f) {
  std::vector<double> v(ShapeSize(shape));
  for (size_t i = 0; i < v.size(); ++i) v[i] = f(static_cast<int64_t>(i));
  return *Tensor::FromValues<double>(dtype, std::move(shape), v);
}

}  // namespace kiln::testing

#endif  // KILN_TESTS_TESTING_NUMPY_CASES_H_
