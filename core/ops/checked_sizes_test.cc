// Property tests: every size, count and offset an op computes from user integers (repeats,
// ranges, shapes, slice bounds, indices, split sizes, pieces to join, broadcast operands) is
// checked before anything is allocated. Extreme int64 values and combinations whose sums or
// products overflow give a status naming the op: never a crash, a wrapped size or a giant buffer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <new>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/kiln.h"
#include "core/ops/op_util.h"
#include "core/ops/random.h"
#include "core/scan/scan.h"
#include "core/tensor/allocator.h"

namespace kiln {
namespace {

using Int128 = __int128;

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
// The allocator's limit in these tests: a valid output larger than this is refused by it.
constexpr int64_t kTestLimit = int64_t{256} << 20;

// The values each integer input takes: the ends of int64, the tensor limit and its neighbours,
// and the small values around 0.
const std::vector<int64_t>& Extremes() {
  static const std::vector<int64_t> values = {kMin,
                                              kMin + 1,
                                              -(int64_t{1} << 62),
                                              -(kMaxTensorBytes + 1),
                                              -2,
                                              -1,
                                              0,
                                              1,
                                              2,
                                              int64_t{1} << 31,
                                              kMaxTensorBytes,
                                              kMaxTensorBytes + 1,
                                              int64_t{1} << 62,
                                              kMax - 1,
                                              kMax};
  return values;
}

Tensor I64(int64_t v) { return *Tensor::Of<int64_t>(DType::kInt64, {}, {v}); }
Tensor I64s(const std::vector<int64_t>& v) {
  return *Tensor::FromValues<int64_t>(DType::kInt64, {static_cast<int64_t>(v.size())}, v);
}
Tensor F64s(const std::vector<double>& v) {
  return *Tensor::FromValues<double>(DType::kFloat64, {static_cast<int64_t>(v.size())}, v);
}
std::string Text(const std::vector<int64_t>& v) { return absl::StrJoin(v, ", "); }

// The bytes of a tensor of `dims` with elements of `item` bytes, exactly, or -1 for a shape
// CheckShape refuses whatever the dtype: a negative dim, a dim over kMaxTensorBytes, or (for an
// empty shape) other dims whose product is over it.
Int128 Bytes(const std::vector<Int128>& dims, int item) {
  Int128 product = 1, nonzero = 1;
  for (Int128 d : dims) {
    if (d < 0 || d > kMaxTensorBytes) return -1;
    product *= d;
    if (d > 0) nonzero *= d;
    if (nonzero > kMaxTensorBytes) return -1;
  }
  return product * item;
}

// What a call gave: its status, or the allocator's refusal (a std::bad_alloc) as
// RESOURCE_EXHAUSTED.
struct Outcome {
  absl::Status status;
  bool allocator_refused = false;
  std::vector<Tensor> values;
};

Outcome Call(const Function& f, std::vector<Tensor> args) {
  try {
    absl::StatusOr<std::vector<Tensor>> r = f(std::move(args));
    if (!r.ok()) return {r.status()};
    return {absl::OkStatus(), false, *std::move(r)};
  } catch (const std::bad_alloc& e) {
    return {absl::ResourceExhaustedError(e.what()), true};
  }
}

bool StartsWithAny(absl::string_view text, const std::vector<std::string>& prefixes) {
  return std::any_of(prefixes.begin(), prefixes.end(),
                     [&](const std::string& p) { return absl::StartsWith(text, p); });
}

// The property of every case, given the output's exact size in bytes (-1 for invalid inputs):
// invalid or over kMaxTensorBytes is a status naming one of `ops`, never the allocator's
// refusal; over the test's limit, that status or the refusal; else a success. True when the
// call succeeded, for the caller to check the values.
bool ExpectSafe(const Outcome& o, Int128 bytes, const std::vector<std::string>& ops,
                const std::string& trace) {
  if (bytes < 0 || bytes > kMaxTensorBytes || (bytes > kTestLimit && !o.allocator_refused)) {
    EXPECT_FALSE(o.status.ok()) << trace << ": a giant output was made";
    EXPECT_FALSE(o.allocator_refused)
        << trace << ": unchecked size reached the allocator: " << o.status;
    EXPECT_TRUE(StartsWithAny(o.status.message(), ops))
        << trace << ": the error does not name " << absl::StrJoin(ops, " or ") << ": " << o.status;
    return false;
  }
  if (bytes > kTestLimit) return false;  // refused by the allocator's limit: fine
  EXPECT_TRUE(o.status.ok()) << trace << ": " << o.status;
  return o.status.ok();
}

// Each test runs under a buffer limit, so that a missing check shows as a refusal, not a crash.
class CheckedSizesTest : public ::testing::Test {
 protected:
  void SetUp() override { SetMaxBufferBytes(kTestLimit); }
  void TearDown() override { SetMaxBufferBytes(0); }

  // function(inputs, outputs), failing the test on an error.
  static Function Compile(const std::vector<Var>& inputs, const std::vector<Var>& outputs) {
    absl::StatusOr<Function> f =
        function(inputs, outputs, {.on_unused_input = OnUnusedInput::kIgnore});
    EXPECT_TRUE(f.ok()) << f.status();
    return *std::move(f);
  }
};

// --- Repeat ----------------------------------------------------------------------------------

// The reported crash: (2^46 + 1) + (2^63 - 1) wrapped, and 2^46 rows were copied into a small
// buffer.
TEST_F(CheckedSizesTest, RepeatCountsThatWrapAreRefused) {
  const Var x = dvector("x"), r = lvector("r");
  const Function f = Compile({x, r}, {repeat(x, r, 0)});
  const Tensor xv = F64s({1, 2, 3});
  for (const std::vector<int64_t>& counts : {std::vector<int64_t>{kMaxTensorBytes + 1, kMax, 5},
                                             {kMax, kMax, 3},
                                             {kMax, 1, 0},
                                             {int64_t{1} << 62, int64_t{1} << 62, int64_t{1} << 62},
                                             {kMaxTensorBytes, 1, 0}}) {
    const Outcome o = Call(f, {xv, I64s(counts)});
    ASSERT_FALSE(o.status.ok()) << Text(counts);
    EXPECT_FALSE(o.allocator_refused) << o.status;
    EXPECT_EQ(std::string(o.status.message()),
              "Repeat{axis=0}: the repeats add up to more than 70368744177664 copies along axis 0")
        << Text(counts);
  }
}

TEST_F(CheckedSizesTest, RepeatCountVectors) {
  const Var x = dvector("x"), r = lvector("r");
  const Function f = Compile({x, r}, {repeat(x, r, 0)});
  const Tensor xv = F64s({1, 2, 3});
  for (int64_t a : Extremes()) {
    for (int64_t b : Extremes()) {
      for (int64_t c : Extremes()) {
        const std::vector<int64_t> counts = {a, b, c};
        const Int128 total = Int128{a} + b + c;
        const Int128 bytes = std::min({a, b, c}) < 0 ? -1 : Bytes({total}, 8);
        const Outcome o = Call(f, {xv, I64s(counts)});
        if (!ExpectSafe(o, bytes, {"Repeat{axis=0}: "}, Text(counts))) continue;
        EXPECT_EQ(o.values[0].shape(), (Shape{static_cast<int64_t>(total)})) << Text(counts);
      }
    }
  }
}

// A scalar count: n * count, checked; an empty x with a huge axis is neither copied row by row
// nor given a vector of one count per row.
TEST_F(CheckedSizesTest, RepeatScalarCounts) {
  const Var x = dmatrix("x"), r = lscalar("r");
  const Function along0 =
      Compile({x, r}, {ApplyOp(std::make_shared<Repeat>(RepeatAttrs{0}), {x, r})});
  const Function along1 =
      Compile({x, r}, {ApplyOp(std::make_shared<Repeat>(RepeatAttrs{1}), {x, r})});
  const int64_t huge = int64_t{1} << 40;
  const std::vector<Tensor> xs = {Tensor::Zeros(DType::kFloat64, {3, 2}),
                                  Tensor::Empty(DType::kFloat64, {huge, 0}),
                                  Tensor::Empty(DType::kFloat64, {0, huge})};
  for (const Tensor& xv : xs) {
    for (int64_t c : Extremes()) {
      for (int axis : {0, 1}) {
        const std::string trace =
            absl::StrCat("x ", ShapeToString(xv.shape()), " count ", c, " axis ", axis);
        std::vector<Int128> dims = {xv.shape()[0], xv.shape()[1]};
        dims[axis] *= c;
        const Int128 bytes = c < 0 ? -1 : Bytes(dims, 8);
        const Outcome o = Call(axis == 0 ? along0 : along1, {xv, I64(c)});
        if (!ExpectSafe(o, bytes, {absl::StrCat("Repeat{axis=", axis, "}: ")}, trace)) continue;
        EXPECT_EQ(o.values[0].shape()[axis], static_cast<int64_t>(dims[axis])) << trace;
      }
    }
  }
}

// repeat() with a scalar count is Aesara's alloc and reshape: the same sizes, refused there.
TEST_F(CheckedSizesTest, RepeatThroughAllocAndReshape) {
  const Var x = dvector("x"), r = lscalar("r");
  const Function f = Compile({x, r}, {repeat(x, r, 0)});
  for (int64_t c : Extremes()) {
    const Int128 bytes = c < 0 ? -1 : Bytes({Int128{3} * c}, 8);
    const Outcome o = Call(f, {F64s({1, 2, 3}), I64(c)});
    if (!ExpectSafe(o, bytes, {"Alloc: ", "Reshape{1}: "}, absl::StrCat("count ", c))) continue;
    EXPECT_EQ(o.values[0].size(), 3 * c);
  }
}

// Constant folding runs Repeat's kernel at compile time: counts that overflow leave the node to
// run time (or fail the compile), naming Repeat; a valid but huge output is not folded.
TEST_F(CheckedSizesTest, ConstantFoldingARepeatOfHugeCounts) {
  const Var x = constant(F64s({1, 2, 3}));
  for (const std::vector<int64_t>& counts : {std::vector<int64_t>{kMaxTensorBytes + 1, kMax, 5},
                                             {kMax, kMax, 3},
                                             {int64_t{1} << 31, 0, 0}}) {
    const Var y = repeat(x, constant(I64s(counts)), 0);
    ASSERT_TRUE(y.ok()) << y.status();
    const bool valid = counts[1] < kMaxTensorBytes;  // 2^31 rows: 16 GiB, under the limit
    absl::StatusOr<Function> f = absl::InternalError("not compiled");
    try {
      f = function({}, {y});
    } catch (const std::bad_alloc& e) {
      EXPECT_TRUE(valid) << Text(counts) << ": the fold reached the allocator: " << e.what();
      continue;
    }
    if (!f.ok()) {
      EXPECT_TRUE(absl::StartsWith(f.status().message(), "Repeat{axis=0}: ")) << f.status();
      continue;
    }
    const Outcome o = Call(*f, {});
    EXPECT_FALSE(o.status.ok()) << Text(counts);
    EXPECT_EQ(o.allocator_refused, valid) << o.status;
    if (!valid) {
      EXPECT_TRUE(absl::StartsWith(o.status.message(), "Repeat{axis=0}: ")) << o.status;
    }
  }
}

// --- ARange, Alloc, Eye ----------------------------------------------------------------------

// NumPy's length, ceil((stop - start) / step) in float64, and the inferred shape agrees with it.
TEST_F(CheckedSizesTest, ARangeBounds) {
  const Var a = lscalar("a"), b = lscalar("b"), c = lscalar("c");
  const Var r = arange(a, b, c);
  absl::StatusOr<ShapeVars> dims = infer_shape(r);
  ASSERT_TRUE(dims.ok()) << dims.status();
  const Function f = Compile({a, b, c}, {r, Var((*dims)[0])});
  for (int64_t start : Extremes()) {
    for (int64_t stop : Extremes()) {
      for (int64_t step : Extremes()) {
        const std::string trace = Text({start, stop, step});
        const double n = std::ceil((static_cast<double>(stop) - static_cast<double>(start)) /
                                   static_cast<double>(step));
        // Only a length that fits is converted (an infinite one would be undefined behaviour).
        const bool too_long = step == 0 || n > static_cast<double>(kMaxTensorBytes);
        const Int128 length = !too_long && n > 0 ? static_cast<Int128>(n) : 0;
        const Int128 bytes = too_long ? -1 : Bytes({length}, 8);
        const Outcome o = Call(f, {I64(start), I64(stop), I64(step)});
        if (!ExpectSafe(o, bytes, {"ARange{dtype='int64'}: "}, trace)) continue;
        const Tensor& v = o.values[0];
        ASSERT_EQ(v.size(), static_cast<int64_t>(length)) << trace;
        EXPECT_EQ(ScalarInt(o.values[1]), v.size()) << trace << ": inferred shape";
        for (int64_t i = 0; i < v.size(); ++i) {
          const Int128 exact = Int128{start} + Int128{i} * step;
          if (exact >= kMin && exact <= kMax) {
            EXPECT_EQ(v.data<int64_t>()[i], static_cast<int64_t>(exact)) << trace;
          }
        }
      }
    }
  }
}

TEST_F(CheckedSizesTest, ARangeOfFloats) {
  const Var a = dscalar("a"), b = dscalar("b"), c = dscalar("c");
  const Function f = Compile({a, b, c}, {arange(a, b, c)});
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> values = {-inf, -1e300, -9.3e18, -1,    -0.5, 0,
                                      0.5,  1,      9.3e18,  1e300, inf,  std::nan("")};
  for (double start : values) {
    for (double stop : values) {
      for (double step : values) {
        const double n = std::ceil((stop - start) / step);
        const bool ok = step != 0 && std::isfinite(n) && n <= static_cast<double>(kMaxTensorBytes);
        const Int128 bytes = ok ? Bytes({n > 0 ? static_cast<Int128>(n) : 0}, 8) : -1;
        const Outcome o = Call(f, {*Tensor::Of<double>(DType::kFloat64, {}, {start}),
                                   *Tensor::Of<double>(DType::kFloat64, {}, {stop}),
                                   *Tensor::Of<double>(DType::kFloat64, {}, {step})});
        ExpectSafe(o, bytes, {"ARange{dtype='float64'}: "},
                   absl::StrCat(start, " ", stop, " ", step));
      }
    }
  }
}

TEST_F(CheckedSizesTest, AllocDims) {
  const Var n = lscalar("n"), m = lscalar("m");
  const Function f = Compile({n, m}, {zeros({n, m})});
  const Function g = Compile({n, m}, {full({n, m, constant(3)}, constant(7))});
  for (int64_t a : Extremes()) {
    for (int64_t b : Extremes()) {
      const Outcome o = Call(f, {I64(a), I64(b)});
      if (ExpectSafe(o, Bytes({a, b}, 8), {"Alloc: "}, Text({a, b}))) {
        EXPECT_EQ(o.values[0].shape(), (Shape{a, b}));
      }
      ExpectSafe(Call(g, {I64(a), I64(b)}), Bytes({a, b, 3}, 1), {"Alloc: "}, Text({a, b, 3}));
    }
  }
  // Constant dims whose product overflows make no type.
  EXPECT_EQ(zeros({constant(int64_t{1} << 62), constant(int64_t{1} << 62)}).status().message(),
            "Alloc: shape (4611686018427387904, 4611686018427387904) has more than "
            "70368744177664 elements");
}

TEST_F(CheckedSizesTest, EyeDimsAndDiagonal) {
  const Var n = lscalar("n"), m = lscalar("m"), k = lscalar("k");
  const Function f = Compile({n, m, k}, {eye(n, m, k)});
  for (int64_t a : Extremes()) {
    for (int64_t b : Extremes()) {
      for (int64_t c : Extremes()) {
        const std::string trace = Text({a, b, c});
        const Outcome o = Call(f, {I64(a), I64(b), I64(c)});
        if (!ExpectSafe(o, Bytes({a, b}, 8), {"Eye{dtype='float64'}: "}, trace)) continue;
        // Ones at (i, i + k) for 0 <= i < n and 0 <= i + k < m, computed in 128 bits.
        const Int128 first = std::max<Int128>(0, -Int128{c});
        const Int128 last = std::min<Int128>(a, Int128{b} - c);
        const Tensor& e = o.values[0];
        double ones = 0;
        for (int64_t i = 0; i < e.size(); ++i) ones += e.data<double>()[i];
        EXPECT_EQ(ones, static_cast<double>(std::max<Int128>(0, last - first))) << trace;
      }
    }
  }
  EXPECT_TRUE(absl::StartsWith(
      eye(constant(int64_t{1} << 40), constant(int64_t{1} << 40), constant(0)).status().message(),
      "Eye{dtype='float64'}: shape (1099511627776, 1099511627776) has more than"));
}

// --- Reshape, SpecifyShape --------------------------------------------------------------------

// NumPy's rules: at most one -1, no other negative entry, the product equal to x's size (or
// dividing it, with a -1); and no dims whose product passes the limit.
Int128 ReshapeBytes(int64_t size, const std::vector<int64_t>& dims) {
  std::vector<Int128> with_ones;
  Int128 known = 1;
  int unknown = 0;
  for (int64_t d : dims) {
    if (d < -1 || (d == -1 && ++unknown > 1)) return -1;
    with_ones.push_back(d == -1 ? 1 : d);
    // Saturated at 2^100 (past any size), so that three extreme dims do not overflow 128 bits.
    if (d != -1)
      known = known != 0 && d > (Int128{1} << 100) / known ? Int128{1} << 100 : known * d;
  }
  const Int128 checked = Bytes(with_ones, 8);
  if (checked < 0 || checked > kMaxTensorBytes) return -1;
  const bool fits = unknown ? known != 0 && size % known == 0 : known == size;
  return fits ? Int128{size} * 8 : -1;
}

TEST_F(CheckedSizesTest, ReshapeTargets) {
  const Var x = dmatrix("x");
  const Var s2 = tensor(DType::kInt64, {2}, "s2"), s3 = tensor(DType::kInt64, {3}, "s3");
  const Function f2 = Compile({x, s2}, {reshape(x, s2)});
  const Function f3 = Compile({x, s3}, {reshape(x, s3)});
  for (const Tensor& xv : {Tensor::Zeros(DType::kFloat64, {3, 4}),
                           Tensor::Empty(DType::kFloat64, {0, int64_t{1} << 40})}) {
    for (int64_t a : Extremes()) {
      for (int64_t b : Extremes()) {
        const std::vector<int64_t> two = {a, b};
        const Outcome o = Call(f2, {xv, I64s(two)});
        if (ExpectSafe(o, ReshapeBytes(xv.size(), two), {"Reshape{2}: "}, Text(two))) {
          EXPECT_EQ(o.values[0].size(), xv.size());
        }
        for (int64_t c : {int64_t{-1}, int64_t{0}, int64_t{2}, kMaxTensorBytes, kMax}) {
          const std::vector<int64_t> three = {a, b, c};
          const Outcome o3 = Call(f3, {xv, I64s(three)});
          if (ExpectSafe(o3, ReshapeBytes(xv.size(), three), {"Reshape{3}: "}, Text(three))) {
            EXPECT_EQ(o3.values[0].size(), xv.size());
          }
        }
      }
    }
  }
}

TEST_F(CheckedSizesTest, SpecifiedDimsAreBounded) {
  EXPECT_EQ(specify_shape(dmatrix(), {int64_t{1} << 40, int64_t{1} << 40}).status().message(),
            "SpecifyShape: shape (1099511627776, 1099511627776) has more than 70368744177664 "
            "elements");
  EXPECT_TRUE(absl::StartsWith(specify_shape(dvector(), {kMax}).status().message(),
                               "SpecifyShape: shape (9223372036854775807,) has more than"));
  EXPECT_TRUE(specify_shape(dvector(), {kMaxTensorBytes}).ok());
}

// --- Indexing --------------------------------------------------------------------------------

// Python's slice(start, stop, step).indices(len) and the indices it selects, in 128 bits (no
// negation of INT64_MIN, no wrapped bound).
std::vector<int64_t> SliceIndices(int64_t len, std::optional<int64_t> start,
                                  std::optional<int64_t> stop, int64_t step) {
  auto clip = [&](std::optional<int64_t> bound, Int128 absent) -> Int128 {
    if (!bound) return absent;
    Int128 b = *bound;
    if (b < 0) {
      b += len;
      if (b < 0) b = step < 0 ? -1 : 0;
    } else if (b >= len) {
      b = step < 0 ? len - 1 : len;
    }
    return b;
  };
  const Int128 lo = clip(start, step < 0 ? len - 1 : 0), hi = clip(stop, step < 0 ? -1 : len);
  std::vector<int64_t> out;
  for (Int128 i = lo; step > 0 ? i < hi : i > hi; i += step) out.push_back(static_cast<int64_t>(i));
  return out;
}

TEST_F(CheckedSizesTest, SliceBoundsAndSteps) {
  const Var x = lvector("x"), a = lscalar("a"), b = lscalar("b"), c = lscalar("c");
  std::vector<int64_t> ten(10);
  for (int i = 0; i < 10; ++i) ten[i] = i;
  const Tensor xv = I64s(ten);
  // The three parts given, the stop left out, the start left out.
  const std::vector<Slice> slices = {Slice{a, b, c}, Slice{a, std::nullopt, c},
                                     Slice{std::nullopt, b, c}};
  for (size_t s = 0; s < slices.size(); ++s) {
    const Var view = subtensor(x, {slices[s]});
    const Function get = Compile({x, a, b, c}, {view});
    const Function set = Compile({x, a, b, c}, {set_subtensor(view, constant(int64_t{100}))});
    const Function inc = Compile({x, a, b, c}, {inc_subtensor(view, constant(int64_t{1}))});
    for (int64_t start : Extremes()) {
      for (int64_t stop : Extremes()) {
        for (int64_t step : Extremes()) {
          const std::string trace = absl::StrCat("slice form ", s, ": ", Text({start, stop, step}));
          // Kiln refuses step 0 (as NumPy) and step -2^63 (which NumPy clamps to -(2^63 - 1)).
          const bool valid = step != 0 && step != kMin;
          std::vector<int64_t> idx;
          if (valid) {
            idx = SliceIndices(10, s == 2 ? std::nullopt : std::optional<int64_t>(start),
                               s == 1 ? std::nullopt : std::optional<int64_t>(stop), step);
          }
          const std::vector<Tensor> args = {xv, I64(start), I64(stop), I64(step)};
          const Outcome g = Call(get, args);
          if (ExpectSafe(g, valid ? 0 : -1, {"Subtensor{"}, trace)) {
            const Tensor& v = g.values[0];
            ASSERT_EQ(v.size(), static_cast<int64_t>(idx.size())) << trace;
            for (size_t i = 0; i < idx.size(); ++i) {
              EXPECT_EQ(v.ElementAsDouble(i), idx[i]) << trace;
            }
          }
          for (const bool is_set : {true, false}) {
            const Outcome o = Call(is_set ? set : inc, args);
            if (!ExpectSafe(o, valid ? 0 : -1, {"IncSubtensor{"}, trace)) continue;
            std::vector<int64_t> expected = ten;
            for (int64_t i : idx) expected[i] = is_set ? 100 : expected[i] + 1;
            EXPECT_TRUE(o.values[0].BitwiseEquals(I64s(expected))) << trace;
          }
        }
      }
    }
  }
  // An integer index.
  const Function at = Compile({x, a}, {subtensor(x, {a})});
  for (int64_t i : Extremes()) {
    const Outcome o = Call(at, {xv, I64(i)});
    if (ExpectSafe(o, i >= -10 && i < 10 ? 8 : -1, {"Subtensor{int64}: "}, Text({i}))) {
      EXPECT_EQ(ScalarInt(o.values[0]), i < 0 ? i + 10 : i);
    }
  }
}

TEST_F(CheckedSizesTest, TakeIndices) {
  const Var x = dmatrix("x"), idx = lvector("idx");
  const Var uidx = tensor(DType::kUInt64, {kUnknownDim}, "uidx");
  const Function take_f = Compile({x, idx}, {take(x, idx)});
  const Function inc_f = Compile({x, idx}, {inc_subtensor(take(x, idx), constant(1.0))});
  const Function utake_f = Compile({x, uidx}, {take(x, uidx)});
  const Tensor xv = Tensor::Zeros(DType::kFloat64, {4, 3});
  for (int64_t a : Extremes()) {
    for (int64_t b : Extremes()) {
      const std::vector<int64_t> pair = {a, b};
      const bool valid = a >= -4 && a < 4 && b >= -4 && b < 4;
      const Outcome t = Call(take_f, {xv, I64s(pair)});
      if (ExpectSafe(t, valid ? 48 : -1, {"AdvancedSubtensor1: "}, Text(pair))) {
        EXPECT_EQ(t.values[0].shape(), (Shape{2, 3}));
      }
      ExpectSafe(Call(inc_f, {xv, I64s(pair)}), valid ? 96 : -1, {"AdvancedIncSubtensor1{"},
                 Text(pair));
      const Tensor u = I64s(pair).AsType(DType::kUInt64);
      const bool uvalid = static_cast<uint64_t>(a) < 4 && static_cast<uint64_t>(b) < 4;
      ExpectSafe(Call(utake_f, {xv, u}), uvalid ? 48 : -1, {"AdvancedSubtensor1: "},
                 absl::StrCat("uint64 ", Text(pair)));
    }
  }
}

// --- Split, Join -----------------------------------------------------------------------------

TEST_F(CheckedSizesTest, SplitSizes) {
  const Var x = dvector("x"), sizes = lvector("sizes");
  auto node =
      std::make_shared<Split>(SplitAttrs{2})->MakeNode({x.ptr(), constant(0).ptr(), sizes.ptr()});
  ASSERT_TRUE(node.ok()) << node.status();
  const Function f = Compile({x, sizes}, {Var((*node)->output(0)), Var((*node)->output(1))});
  for (int64_t a : Extremes()) {
    for (int64_t b : Extremes()) {
      const bool valid = a >= 0 && b >= 0 && Int128{a} + b == 4;
      const Outcome o = Call(f, {F64s({1, 2, 3, 4}), I64s({a, b})});
      if (!ExpectSafe(o, valid ? 32 : -1, {"Split{2}: "}, Text({a, b}))) continue;
      EXPECT_EQ(o.values[0].size(), a);
      EXPECT_EQ(o.values[1].size(), b);
    }
  }
}

// Empty pieces cost nothing, but their lengths on the axis still add up: checked.
TEST_F(CheckedSizesTest, JoinLengths) {
  const Var n = lscalar("n");
  const Var piece = zeros({constant(0), n}, DType::kInt8);
  const Function f = Compile({n}, {concatenate({piece, piece, piece}, 1)});
  for (int64_t a : Extremes()) {
    const Int128 bytes = Bytes({0, a}, 1) < 0 ? -1 : Bytes({0, Int128{3} * a}, 1);
    const Outcome o = Call(f, {I64(a)});
    if (ExpectSafe(o, bytes, {"Alloc: ", "Join: "}, Text({a}))) {
      EXPECT_EQ(o.values[0].shape(), (Shape{0, 3 * a}));
    }
  }
  // Wrapped memory (a NumPy array) may have empty dims past the limit; their sum overflows.
  const Var m = tensor(DType::kInt8, {kUnknownDim, kUnknownDim}, "m");
  const Var j = concatenate({m, m, m}, 1);
  ASSERT_TRUE(j.ok()) << j.status();
  const Apply& node = *j->owner();
  static char byte = 0;
  const Tensor wide = Tensor::Wrap(DType::kInt8, {0, int64_t{1} << 62}, {0, 1}, &byte, nullptr);
  const std::vector<Tensor> in = {static_cast<const Constant&>(*node.inputs()[0]).data(), wide,
                                  wide, wide};
  std::vector<Tensor> out(1);
  const absl::Status s = node.op().Perform(node, in, out);
  EXPECT_EQ(s.message(), "Join: the inputs' lengths on axis 1 add up to more than 70368744177664");
  // Static lengths add up in checked arithmetic too.
  const Var big = tensor(DType::kInt8, {0, kMaxTensorBytes}, "big");
  EXPECT_TRUE(absl::StartsWith(concatenate({big, big}, 1).status().message(),
                               "Join: dimension 140737488355328 of shape (0, 140737488355328)"));
}

// --- Broadcasting, products, reductions -------------------------------------------------------

// Three 4 MiB operands broadcast to 2^66 elements: refused, not a wrapped size of 0.
TEST_F(CheckedSizesTest, ElemwiseBroadcastThatOverflows) {
  const int64_t k = int64_t{1} << 22;
  const Var x = tensor(DType::kInt8, {kUnknownDim, 1, 1}, "x");
  const Var y = tensor(DType::kInt8, {1, kUnknownDim, 1}, "y");
  const Var z = tensor(DType::kInt8, {1, 1, kUnknownDim}, "z");
  const Function f3 = Compile({x, y, z}, {x + y + z});
  const Function f2 = Compile({x, y}, {x * y});
  const Tensor xv = Tensor::Zeros(DType::kInt8, {k, 1, 1});
  const Tensor yv = Tensor::Zeros(DType::kInt8, {1, k, 1});
  const Tensor zv = Tensor::Zeros(DType::kInt8, {1, 1, k});
  ExpectSafe(Call(f3, {xv, yv, zv}), Bytes({k, k, k}, 1), {"Elemwise{"}, "x + y + z");
  ExpectSafe(Call(f2, {Tensor::Zeros(DType::kInt8, {k * 4, 1, 1}), yv}), Bytes({k * 4, k, 1}, 1),
             {"Elemwise{"}, "x * y");
}

// (n, 0) @ (0, n) is n * n zeros, from empty operands: checked before the product is allocated.
TEST_F(CheckedSizesTest, ProductOfEmptyOperands) {
  const Var a = dmatrix("a"), b = dmatrix("b");
  const Function f = Compile({a, b}, {dot(a, b)});
  for (int64_t n : {int64_t{1} << 20, int64_t{1} << 23, int64_t{1} << 40, kMaxTensorBytes}) {
    const Outcome o =
        Call(f, {Tensor::Empty(DType::kFloat64, {n, 0}), Tensor::Empty(DType::kFloat64, {0, n})});
    ExpectSafe(o, Bytes({n, n}, 8), {"dot: ", "Dot22: ", "Gemm{", "MatMul: ", "Alloc: "},
               Text({n}));
  }
}

TEST_F(CheckedSizesTest, ReductionsOfEmptyTensors) {
  const Var x = dmatrix("x");
  const Function f = Compile({x}, {sum(x, 1)});
  const Function cum = Compile({x}, {cumsum(x, 0), cumsum(x)});
  for (int64_t n : {int64_t{1} << 20, int64_t{1} << 40, kMaxTensorBytes}) {
    const Tensor xv = Tensor::Empty(DType::kFloat64, {n, 0});
    ExpectSafe(Call(f, {xv}), Bytes({n}, 8), {"Sum{"}, Text({n}));
    const Outcome c = Call(cum, {xv});
    ASSERT_TRUE(c.status.ok()) << c.status;
    EXPECT_EQ(c.values[0].shape(), (Shape{n, 0}));
  }
}

// --- Random sizes, scan lengths ----------------------------------------------------------------

TEST_F(CheckedSizesTest, RandomSizes) {
  const Var rng = tensor(DType::kUInt64, {2}, "rng");
  for (const std::vector<int64_t>& size : {std::vector<int64_t>{-1},
                                           {kMin},
                                           {int64_t{1} << 62, int64_t{1} << 62},
                                           {kMaxTensorBytes + 1},
                                           {int64_t{1} << 31, int64_t{1} << 31},
                                           {kMax, 0},
                                           {2, 3}}) {
    std::vector<Int128> dims(size.begin(), size.end());
    const Int128 bytes = Bytes(dims, 8);
    absl::StatusOr<std::vector<Var>> draw =
        random_variable("normal", rng, {constant(0.0), constant(1.0)}, size);
    if (!draw.ok()) {
      EXPECT_LT(bytes, 0) << Text(size);
      EXPECT_TRUE(absl::StartsWith(draw.status().message(), "normal_rv{")) << draw.status();
      continue;
    }
    absl::StatusOr<Function> f = function({rng}, {(*draw)[1]});
    if (!f.ok()) {
      EXPECT_LT(bytes, 0) << Text(size);
      EXPECT_TRUE(absl::StartsWith(f.status().message(), "normal_rv{")) << f.status();
      continue;
    }
    ExpectSafe(Call(*f, {RngState(1)}), bytes, {"normal_rv{"}, Text(size));
  }
}

// A scan whose only result is its last state keeps a ring of rows, not n_steps of them: n_steps
// near 2^63 must not make `n_steps + span` wrap past the sequence's length check
// (core/scan/scan_run.cc), which would then read past the sequence.
TEST_F(CheckedSizesTest, ScanStepsNearTheEndOfInt64) {
  const Var x = dvector("x"), k = lscalar("k");
  ScanArgs args;
  args.sequences = {{x, {0, 1}}};
  args.outputs_info = {{scalar_constant(0.0, DType::kFloat64)}};
  args.n_steps = k;
  absl::StatusOr<ScanResult> r =
      scan([](const std::vector<Var>& v) { return ScanStep{{v[0] + v[1] + v[2]}}; }, args);
  ASSERT_TRUE(r.ok()) << r.status();
  const Function f = Compile({x, k}, {subtensor(r->outputs[0], {-1})});
  for (int64_t n : {kMax, kMax - 1, kMax - (1 << 20), kMin, int64_t{-1}}) {
    ExpectSafe(Call(f, {F64s({1, 2, 3}), I64(n)}), -1, {"for{cpu,scan_fn}: "}, Text({n}));
  }
}

}  // namespace
}  // namespace kiln
