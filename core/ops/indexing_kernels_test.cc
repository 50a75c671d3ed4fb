// The gather and scatter fast paths (core/ops/indexing_kernels.cc) through the ops that use them:
// one-element rows, contiguous rows, strided, transposed and broadcast inputs, repeated, sorted
// and negative indices, every index dtype, the fast-path dtypes and a few others, against direct
// loops (bitwise) and NumPy's numbers.
#include "core/ops/indexing_kernels.h"

#include <gtest/gtest.h>

#include <complex>
#include <cstring>

#include "core/kiln.h"
#include "core/ops/advanced_indexing.h"
#include "core/ops/indexing.h"
#include "core/tensor/status_macros.h"

namespace kiln {
namespace {

// Deterministic values of any dtype: (i * 37 % 101 - 50) / 8, converted (exact in float16).
Tensor Values(DType dtype, Shape shape) {
  Tensor t = Tensor::Empty(DType::kFloat64, shape);
  for (int64_t i = 0; i < t.size(); ++i) t.data<double>()[i] = (i * 37 % 101 - 50) / 8.0;
  return t.AsType(dtype);
}

// Values whose sums depend on the order of the additions: large and tiny magnitudes mixed.
Tensor Awkward(DType dtype, Shape shape) {
  Tensor t = Tensor::Empty(DType::kFloat64, shape);
  const double mix[] = {1e16, 0.1, -1e16, 1.0, 0.3, 3e15, -7.25, 1e-3, 2.0 / 3.0};
  for (int64_t i = 0; i < t.size(); ++i) t.data<double>()[i] = mix[i % 9] * (1 + i % 5);
  return t.AsType(dtype);
}

Tensor Ints(DType dtype, std::vector<int64_t> v) {
  return *Tensor::FromValues<int64_t>(dtype, {static_cast<int64_t>(v.size())}, v);
}

// The radon model's shape: `count` group ids in [0, groups), sorted or scattered.
std::vector<int64_t> GroupIds(int64_t count, int64_t groups, bool sorted) {
  std::vector<int64_t> v(count);
  for (int64_t i = 0; i < count; ++i) v[i] = (i * 7919 + 13) % groups;
  if (sorted) std::sort(v.begin(), v.end());
  return v;
}

std::vector<int64_t> AsRows(const Tensor& idx, int64_t len) {
  std::vector<int64_t> rows;
  const Tensor c = idx.AsType(DType::kInt64);
  for (int64_t i = 0; i < c.size(); ++i) {
    const int64_t r = c.data<int64_t>()[i];
    rows.push_back(r < 0 ? r + len : r);
  }
  return rows;
}

// Runs an op's Perform on values (a node made from their types); its first output or the error.
absl::StatusOr<Tensor> RunOp(const OpPtr& op, std::vector<Tensor> inputs) {
  std::vector<VariablePtr> vars;
  for (const Tensor& t : inputs) vars.push_back(tensor(t.dtype(), StaticShape(t.ndim())).ptr());
  ASSIGN_OR_RETURN(ApplyPtr node, op->MakeNode(vars));
  std::vector<Tensor> out(1);
  RETURN_IF_ERROR(node->op().Perform(*node, inputs, out));
  return out[0];
}

OpPtr TakeOp() { return std::make_shared<AdvancedSubtensor1>(); }
OpPtr IncOp(bool set, bool inplace = false) {
  return std::make_shared<AdvancedIncSubtensor1>(
      AdvancedIncSubtensor1Attrs{.set = set, .inplace = inplace});
}

// x[rows] by a direct loop over bytes (any dtype, bitwise).
Tensor RefTake(const Tensor& x, const std::vector<int64_t>& rows) {
  const Tensor c = x.Contiguous();
  Shape shape = x.shape();
  shape[0] = static_cast<int64_t>(rows.size());
  Tensor out = Tensor::Empty(x.dtype(), shape);
  const int64_t bytes = x.shape()[0] ? c.nbytes() / x.shape()[0] : 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    std::memcpy(static_cast<char*>(out.raw_data()) + i * bytes,
                static_cast<const char*>(c.raw_data()) + rows[i] * bytes, bytes);
  }
  return out;
}

// out[rows[i]] = or += y[i] for i in order, element by element in T (numpy.add.at's order).
template <typename T>
Tensor RefScatter(const Tensor& x, const Tensor& y, const std::vector<int64_t>& rows, bool set) {
  Tensor out = x.AsType(x.dtype());
  Shape target = x.shape();
  target[0] = static_cast<int64_t>(rows.size());
  const Tensor yc = y.AsType(x.dtype()).BroadcastTo(target)->AsType(x.dtype());
  const int64_t row = x.shape()[0] ? x.size() / x.shape()[0] : 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    for (int64_t k = 0; k < row; ++k) {
      T& d = out.data<T>()[rows[i] * row + k];
      const T v = yc.data<T>()[i * row + k];
      d = set ? v : static_cast<T>(d + v);
    }
  }
  return out;
}

Tensor RefScatterAny(const Tensor& x, const Tensor& y, const std::vector<int64_t>& rows, bool set) {
  switch (x.dtype()) {
    case DType::kFloat32:
      return RefScatter<float>(x, y, rows, set);
    case DType::kInt64:
      return RefScatter<int64_t>(x, y, rows, set);
    case DType::kInt32:
      return RefScatter<int32_t>(x, y, rows, set);
    case DType::kInt8:
      return RefScatter<int8_t>(x, y, rows, set);
    case DType::kComplex128:
      return RefScatter<std::complex<double>>(x, y, rows, set);
    default:
      return RefScatter<double>(x, y, rows, set);
  }
}

void ExpectBitwise(const absl::StatusOr<Tensor>& got, const Tensor& want) {
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(got->BitwiseEquals(want))
      << "got " << got->ToString() << "\nwant " << want.ToString();
}

const DType kDataTypes[] = {DType::kFloat64,    DType::kFloat32, DType::kInt64,
                            DType::kInt32,      DType::kInt8,    DType::kUInt16,
                            DType::kComplex128, DType::kFloat16, DType::kBool};
const DType kIndexTypes[] = {DType::kInt64, DType::kInt32, DType::kInt16, DType::kUInt8,
                             DType::kUInt64};

// One-element rows (a vector), every data dtype and index dtype; negative and repeated indices.
TEST(IndexingKernelsTest, TakeVectorEveryDType) {
  for (DType dt : kDataTypes) {
    for (DType it : kIndexTypes) {
      SCOPED_TRACE(absl::StrCat(DTypeName(dt), " indexed by ", DTypeName(it)));
      const Tensor x = Values(dt, {17});
      const bool is_signed = it != DType::kUInt8 && it != DType::kUInt64;
      const std::vector<int64_t> v = is_signed ? std::vector<int64_t>{0, 16, -1, -17, 3, 3, 9, 0}
                                               : std::vector<int64_t>{0, 16, 16, 3, 3, 9, 0};
      const Tensor idx = Ints(it, v);
      ExpectBitwise(RunOp(TakeOp(), {x, idx}), RefTake(x, AsRows(idx, 17)));
    }
  }
}

// The radon model's gather: 919 group ids into 85 groups, sorted and scattered, int64 and int32.
TEST(IndexingKernelsTest, TakeRadonShape) {
  for (bool sorted : {false, true}) {
    for (DType it : {DType::kInt64, DType::kInt32}) {
      const Tensor x = Values(DType::kFloat64, {85});
      const Tensor idx = Ints(it, GroupIds(919, 85, sorted));
      ExpectBitwise(RunOp(TakeOp(), {x, idx}), RefTake(x, AsRows(idx, 85)));
    }
  }
}

// A source larger than L2 (the gather prefetches): 10^5 float64, 3 * 10^5 indices, some negative.
TEST(IndexingKernelsTest, TakeFromLargeVector) {
  const Tensor x = Values(DType::kFloat64, {100000});
  std::vector<int64_t> v = GroupIds(300000, 100000, false);
  for (size_t i = 0; i < v.size(); i += 7) v[i] -= 100000;
  for (DType it : {DType::kInt64, DType::kInt32}) {
    const Tensor idx = Ints(it, v);
    ExpectBitwise(RunOp(TakeOp(), {x, idx}), RefTake(x, AsRows(idx, 100000)));
  }
}

// Rows of several elements: contiguous (memcpy), transposed, strided and broadcast inputs, and a
// strided index vector.
TEST(IndexingKernelsTest, TakeRowsAndViews) {
  const Tensor base = Values(DType::kFloat64, {6, 4, 5});
  const Tensor idx = Ints(DType::kInt64, {5, -6, 2, 2, 0, -1});
  const std::vector<int64_t> rows = AsRows(idx, 6);
  ExpectBitwise(RunOp(TakeOp(), {base, idx}), RefTake(base, rows));
  // base.transpose(1, 0, 2)[...] has shape (4, 6, 5) and strides (5, 20, 1).
  const Tensor transposed = base.View({4, 6, 5}, {5, 20, 1});
  const Tensor idx4 = Ints(DType::kInt32, {3, 0, -1, 1});
  ExpectBitwise(RunOp(TakeOp(), {transposed, idx4}), RefTake(transposed, AsRows(idx4, 4)));
  // base[:, ::2, ::-1]: rows of (2, 5) elements at strides (40, -1), offset 4.
  const Tensor strided = base.View({6, 2, 5}, {20, 10, -1}, 4);
  ExpectBitwise(RunOp(TakeOp(), {strided, idx}), RefTake(strided, rows));
  // A matrix transposed: one-element rows... of 6 elements each at stride 5 (x.T of (6, 5)).
  const Tensor mt = Values(DType::kFloat32, {6, 5}).View({5, 6}, {1, 5});
  const Tensor idx5 = Ints(DType::kInt64, {4, 4, 0, -2});
  ExpectBitwise(RunOp(TakeOp(), {mt, idx5}), RefTake(mt, AsRows(idx5, 5)));
  // A column (stride 5) as a vector, and a broadcast row (stride 0).
  const Tensor column = Values(DType::kInt32, {6, 5}).View({6}, {5}, 2);
  ExpectBitwise(RunOp(TakeOp(), {column, idx}), RefTake(column, rows));
  const Tensor bcast = *Values(DType::kFloat64, {1, 3}).BroadcastTo({6, 3});
  ExpectBitwise(RunOp(TakeOp(), {bcast, idx}), RefTake(bcast, rows));
  // Every other index of a longer vector.
  const Tensor idx_strided = Ints(DType::kInt64, {1, 99, -2, 99, 4, 99}).View({3}, {2});
  ExpectBitwise(RunOp(TakeOp(), {base, idx_strided}), RefTake(base, {1, 4, 4}));
  // Empty indices and empty rows.
  ExpectBitwise(RunOp(TakeOp(), {base, Ints(DType::kInt64, {})}),
                Tensor::Empty(DType::kFloat64, {0, 4, 5}));
  ExpectBitwise(
      RunOp(TakeOp(), {Tensor::Empty(DType::kFloat64, {3, 0}), Ints(DType::kInt32, {2, -3})}),
      Tensor::Empty(DType::kFloat64, {2, 0}));
}

// numpy.add.at's numbers: order-dependent sums at repeated indices (NumPy 1.24,
// np.add.at(np.zeros(3), [0, 1, 0, 0, 2, 1, -1, -3], [1e16, 1, 1, -1e16, .1, .2, .3, 1])).
TEST(IndexingKernelsTest, IncMatchesNumPyAddAt) {
  const Tensor idx = Ints(DType::kInt64, {0, 1, 0, 0, 2, 1, -1, -3});
  const Tensor y = *Tensor::Of<double>(DType::kFloat64, {8}, {1e16, 1, 1, -1e16, .1, .2, .3, 1});
  absl::StatusOr<Tensor> got = RunOp(IncOp(false), {Tensor::Zeros(DType::kFloat64, {3}), y, idx});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->data<double>()[0], 1.0);
  EXPECT_EQ(got->data<double>()[1], 1.2);
  EXPECT_EQ(got->data<double>()[2], 0.4);
  got = RunOp(IncOp(false), {Tensor::Zeros(DType::kFloat32, {3}), y.AsType(DType::kFloat32),
                             idx.AsType(DType::kInt32)});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->data<float>()[0], 1.0f);
  EXPECT_EQ(got->data<float>()[1], 1.2000000476837158f);
  EXPECT_EQ(got->data<float>()[2], 0.4000000059604645f);
  // set keeps the last write: x = arange(3); x[idx] = y gives [1, .2, .3].
  got = RunOp(IncOp(true), {*Tensor::Of<double>(DType::kFloat64, {3}, {0, 1, 2}), y, idx});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->data<double>()[0], 1.0);
  EXPECT_EQ(got->data<double>()[1], 0.2);
  EXPECT_EQ(got->data<double>()[2], 0.3);
}

// One-element rows at the radon shape, sorted (runs summed in a register) and scattered, every
// fast-path dtype and both index widths, bitwise against the sequential loop.
TEST(IndexingKernelsTest, IncVectorRepeatedIndices) {
  for (DType dt : {DType::kFloat64, DType::kFloat32, DType::kInt64, DType::kInt32, DType::kInt8}) {
    for (DType it : {DType::kInt64, DType::kInt32, DType::kUInt8}) {
      for (bool sorted : {false, true}) {
        for (bool set : {false, true}) {
          SCOPED_TRACE(absl::StrCat(DTypeName(dt), " ", DTypeName(it), sorted ? " sorted" : "",
                                    set ? " set" : " inc"));
          const Tensor x = Values(dt, {85});
          const Tensor y = IsInteger(dt) ? Values(dt, {919}) : Awkward(dt, {919});
          const Tensor idx = Ints(it, GroupIds(919, 85, sorted));
          ExpectBitwise(RunOp(IncOp(set), {x, y, idx}), RefScatterAny(x, y, AsRows(idx, 85), set));
        }
      }
    }
  }
}

// Increments of other dtypes through the same kernels: complex, float16 and bool (or).
TEST(IndexingKernelsTest, IncOtherDTypes) {
  const Tensor idx = Ints(DType::kInt64, {2, 0, 2, -1, 1});
  const Tensor xc = Values(DType::kComplex128, {3}), yc = Values(DType::kComplex128, {5});
  ExpectBitwise(RunOp(IncOp(false), {xc, yc, idx}), RefScatterAny(xc, yc, AsRows(idx, 3), false));
  absl::StatusOr<Tensor> h =
      RunOp(IncOp(false), {Values(DType::kFloat16, {3}), Values(DType::kFloat16, {5}), idx});
  ASSERT_TRUE(h.ok()) << h.status();
  const Tensor want = RefScatter<double>(Values(DType::kFloat64, {3}), Values(DType::kFloat64, {5}),
                                         AsRows(idx, 3), false);
  for (int k = 0; k < 3; ++k) EXPECT_EQ(h->ElementAsDouble(k), want.ElementAsDouble(k));
  absl::StatusOr<Tensor> b =
      RunOp(IncOp(false),
            {*Tensor::Of<bool>(DType::kBool, {3}, {false, false, true}),
             *Tensor::Of<bool>(DType::kBool, {2}, {true, false}), Ints(DType::kInt64, {1, 0})});
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->ElementAsDouble(0), 0.0);
  EXPECT_EQ(b->ElementAsDouble(1), 1.0);
  EXPECT_EQ(b->ElementAsDouble(2), 1.0);
}

// Rows of several elements: y contiguous, broadcast along the rows, a scalar, transposed and
// reversed; y of another dtype converted once.
TEST(IndexingKernelsTest, IncRowsAndViews) {
  const Tensor x = Values(DType::kFloat64, {5, 3, 4});
  const Tensor idx = Ints(DType::kInt64, {4, -5, 4, 1, 1, 0, -1});
  const std::vector<int64_t> rows = AsRows(idx, 5);
  const Tensor y = Awkward(DType::kFloat64, {7, 3, 4});
  const Tensor y_row = Awkward(DType::kFloat64, {1, 3, 4});  // broadcast along the indices
  const Tensor y_last = Awkward(DType::kFloat64, {4});       // broadcast rows of rows
  const Tensor y_col = Awkward(DType::kFloat64, {7, 1, 1});  // one value per index
  const Tensor y_scalar = Awkward(DType::kFloat64, {});
  const Tensor y_t = Awkward(DType::kFloat64, {4, 3, 7}).View({7, 3, 4}, {1, 7, 21});
  const Tensor y_rev = Awkward(DType::kFloat64, {7, 3, 4}).View({7, 3, 4}, {12, 4, -1}, 3);
  for (bool set : {false, true}) {
    for (const Tensor& v : {y, y_row, y_last, y_col, y_scalar, y_t, y_rev}) {
      SCOPED_TRACE(absl::StrCat(set ? "set " : "inc ", ShapeToString(v.shape())));
      ExpectBitwise(RunOp(IncOp(set), {x, v, idx}), RefScatterAny(x, v, rows, set));
    }
    const Tensor yi = Values(DType::kInt32, {7, 3, 4});
    ExpectBitwise(RunOp(IncOp(set), {x, yi, idx}), RefScatterAny(x, yi, rows, set));
    const Tensor xi = Values(DType::kInt64, {5, 3, 4});
    ExpectBitwise(RunOp(IncOp(set), {xi, yi, idx.AsType(DType::kInt32)}),
                  RefScatterAny(xi, yi, rows, set));
  }
  // x transposed (not contiguous): the output is a contiguous copy.
  const Tensor xt = Values(DType::kFloat32, {4, 5}).View({5, 4}, {1, 5});
  const Tensor yf = Awkward(DType::kFloat32, {7, 4});
  ExpectBitwise(RunOp(IncOp(false), {xt, yf, idx}), RefScatterAny(xt, yf, rows, false));
}

// The inplace variant writes x's buffer (when contiguous) and gives the same values; the
// no_inplace one leaves x alone.
TEST(IndexingKernelsTest, InplaceWritesX) {
  const Tensor idx = Ints(DType::kInt64, {1, 1, 0});
  const Tensor y = Values(DType::kFloat64, {3, 2});
  const Tensor want = RefScatterAny(Values(DType::kFloat64, {2, 2}), y, {1, 1, 0}, false);
  Tensor x = Values(DType::kFloat64, {2, 2});
  absl::StatusOr<Tensor> kept = RunOp(IncOp(false), {x, y, idx});
  ExpectBitwise(kept, want);
  EXPECT_FALSE(kept->SharesBufferWith(x));
  EXPECT_TRUE(x.BitwiseEquals(Values(DType::kFloat64, {2, 2})));
  absl::StatusOr<Tensor> in_place = RunOp(IncOp(false, true), {x, y, idx});
  ExpectBitwise(in_place, want);
  EXPECT_TRUE(in_place->SharesBufferWith(x));
  EXPECT_TRUE(x.BitwiseEquals(want));
  // Not contiguous: a copy, as no_inplace.
  const Tensor xt = Values(DType::kFloat64, {2, 2}).View({2, 2}, {1, 2});
  absl::StatusOr<Tensor> copied = RunOp(IncOp(false, true), {xt, y, idx});
  ExpectBitwise(copied, RefScatterAny(xt, y, {1, 1, 0}, false));
  EXPECT_FALSE(copied->SharesBufferWith(xt));
  // AdvancedIncSubtensor's general path (two index vectors) in place too, but not x[idx] += y.
  for (bool once : {false, true}) {
    Tensor m = Values(DType::kFloat64, {3, 3});
    const Tensor i = Ints(DType::kInt64, {0, 2, 0}), j = Ints(DType::kInt64, {1, 1, 1});
    const Tensor v = *Tensor::Of<double>(DType::kFloat64, {3}, {1, 2, 4});
    absl::StatusOr<Tensor> r =
        RunOp(std::make_shared<AdvancedIncSubtensor>(
                  AdvancedIncSubtensorAttrs{.idx_list = {AdvIndexEntry{}, AdvIndexEntry{}},
                                            .inplace = true,
                                            .ignore_duplicates = once}),
              {m, v, i, j});
    ASSERT_TRUE(r.ok()) << r.status();
    const Tensor x0 = Values(DType::kFloat64, {3, 3});
    EXPECT_EQ(r->data<double>()[1], x0.data<double>()[1] + (once ? 4 : 5));
    EXPECT_EQ(r->data<double>()[7], x0.data<double>()[7] + 2);
    EXPECT_EQ(r->SharesBufferWith(m), !once);
    EXPECT_EQ(m.BitwiseEquals(x0), once);
  }
  // Through a compiled function: the graph's input is copied before the in-place node.
  const Var xv = dmatrix("x"), yv = dmatrix("y"), iv = lvector("i");
  const Var out = ApplyOp(IncOp(false, true), {xv, yv, iv});
  auto f = function({xv, yv, iv}, {out}, {.mode = OptimizerMode::kNone});
  ASSERT_TRUE(f.ok()) << f.status();
  const Tensor arg = Values(DType::kFloat64, {2, 2});
  auto r = (*f)({arg, y, idx});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE((*r)[0].BitwiseEquals(want));
  EXPECT_TRUE(arg.BitwiseEquals(Values(DType::kFloat64, {2, 2})));
}

// Out-of-range indices: the op, the value, the axis and its size, whatever the index dtype; x
// is not written.
TEST(IndexingKernelsTest, OutOfBounds) {
  const Tensor x = Values(DType::kFloat64, {3});
  const Tensor y = Values(DType::kFloat64, {3});
  struct Case {
    Tensor idx;
    std::string value;
  };
  const Case cases[] = {
      {Ints(DType::kInt64, {0, 3, -9}), "3"},
      {Ints(DType::kInt64, {0, -4, 7}), "-4"},
      {Ints(DType::kInt32, {2, -1, -4}), "-4"},
      {Ints(DType::kInt8, {1, 127, 0}), "127"},
      {Ints(DType::kUInt64, {0, -1, 1}), "18446744073709551615"},
      {Ints(DType::kInt64, {INT64_MIN, 0, 0}), "-9223372036854775808"},
      {Ints(DType::kInt64, {7, 1, 8}).View({2}, {2}), "7"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.idx.ToString());
    EXPECT_EQ(RunOp(TakeOp(), {x, c.idx}).status().message(),
              absl::StrCat("AdvancedSubtensor1: index ", c.value,
                           " is out of bounds for axis 0 with size 3"));
    const int64_t n = c.idx.shape()[0];
    for (bool set : {false, true}) {
      Tensor target = Values(DType::kFloat64, {3});
      EXPECT_EQ(RunOp(IncOp(set, true), {target, y.View({n}, {1}), c.idx}).status().message(),
                absl::StrCat("AdvancedIncSubtensor1{inplace,", set ? "set" : "inc", "}: index ",
                             c.value, " is out of bounds for axis 0 with size 3"));
      EXPECT_TRUE(target.BitwiseEquals(Values(DType::kFloat64, {3})));
    }
  }
  EXPECT_EQ(RunOp(TakeOp(), {Tensor::Empty(DType::kFloat64, {0, 2}), Ints(DType::kInt64, {0})})
                .status()
                .message(),
            "AdvancedSubtensor1: index 0 is out of bounds for axis 0 with size 0");
  EXPECT_EQ(RunOp(IncOp(false), {x, Values(DType::kFloat64, {2}), Ints(DType::kInt64, {0, 1, 2})})
                .status()
                .message(),
            "AdvancedIncSubtensor1{no_inplace,inc}: y of shape (2,) does not broadcast to x[idx] "
            "of shape (3,)");
}

// AdvancedSubtensor and AdvancedIncSubtensor with one index vector (and full slices after it)
// take the same kernels: their values equal AdvancedSubtensor1's and AdvancedIncSubtensor1's.
TEST(IndexingKernelsTest, AdvancedTakeLikeUsesFastPath) {
  const Tensor x = Values(DType::kFloat64, {6, 4});
  const Tensor idx = Ints(DType::kInt32, {5, -6, 2, 2, 0});
  const std::vector<int64_t> rows = AsRows(idx, 6);
  for (int slices : {0, 1}) {
    std::vector<AdvIndexEntry> entries = {AdvIndexEntry{}};
    if (slices) entries.push_back(AdvIndexEntry{.kind = AdvIndexEntry::kSlice});
    ExpectBitwise(
        RunOp(std::make_shared<AdvancedSubtensor>(AdvancedSubtensorAttrs{entries}), {x, idx}),
        RefTake(x, rows));
    const Tensor y = Awkward(DType::kFloat64, {5, 4});
    for (bool set : {false, true}) {
      ExpectBitwise(RunOp(std::make_shared<AdvancedIncSubtensor>(AdvancedIncSubtensorAttrs{
                              .idx_list = entries, .set_instead_of_inc = set}),
                          {x, y, idx}),
                    RefScatterAny(x, y, rows, set));
    }
    // x[idx] += y: a repeated index adds its last value once.
    absl::StatusOr<Tensor> once =
        RunOp(std::make_shared<AdvancedIncSubtensor>(
                  AdvancedIncSubtensorAttrs{.idx_list = entries, .ignore_duplicates = true}),
              {x, y, idx});
    ASSERT_TRUE(once.ok()) << once.status();
    EXPECT_EQ(once->data<double>()[2 * 4], x.data<double>()[2 * 4] + y.data<double>()[3 * 4]);
  }
  EXPECT_EQ(RunOp(std::make_shared<AdvancedSubtensor>(AdvancedSubtensorAttrs{{AdvIndexEntry{}}}),
                  {x, Ints(DType::kInt64, {6})})
                .status()
                .message(),
            "AdvancedSubtensor: index 6 is out of bounds for axis 0 with size 6");
}

}  // namespace
}  // namespace kiln
