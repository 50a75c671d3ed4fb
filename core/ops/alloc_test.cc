#include "core/ops/alloc.h"

#include <gtest/gtest.h>

#include <limits>

#include "core/kiln.h"
#include "tests/testing/eval.h"

namespace kiln {
namespace {

Tensor Scalar(int64_t v) { return *Tensor::Of<int64_t>(DType::kInt64, {}, {v}); }

TEST(AllocTest, ZerosOnesFullAndLike) {
  Var n = lscalar("n");
  Var z = zeros({n, constant(3)});
  EXPECT_EQ(z->owner()->op().Name(), "Alloc");
  EXPECT_EQ(z->type()->ToString(), "TensorType(float64, (?, 3))");
  Var o = ones({constant(2)}, DType::kInt32);
  Var f = full({constant(2), constant(2)}, constant(7.5));
  Var x = dvector("x");
  Var zl = zeros_like(x);
  EXPECT_EQ(zl->owner()->op().Name(), "Elemwise{second,no_inplace}");
  auto out = testing::Eval({n, x}, {z, o, f, zl, ones_like(x, DType::kInt8)},
                           {Scalar(2), *Tensor::Of<double>(DType::kFloat64, {3}, {5, 6, 7})});
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[0].ToString(), "[[0. 0. 0.]\n [0. 0. 0.]]");
  EXPECT_EQ(out[1].ToString(), "[1 1]");
  EXPECT_EQ(out[2].ToString(), "[[7.5 7.5]\n [7.5 7.5]]");
  EXPECT_EQ(out[3].ToString(), "[0. 0. 0.]");
  EXPECT_EQ(out[4].ToString(), "[1 1 1]");
}

TEST(AllocTest, AllocBroadcastsAndChecks) {
  Var v = dvector("v"), n = lscalar("n");
  auto f = function({v, n}, {alloc(v, {n, constant(3)})});
  ASSERT_TRUE(f.ok()) << f.status();
  auto out = (*f)({*Tensor::Of<double>(DType::kFloat64, {3}, {1, 2, 3}), Scalar(2)});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].ToString(), "[[1. 2. 3.]\n [1. 2. 3.]]");
  EXPECT_EQ((*f)({*Tensor::Of<double>(DType::kFloat64, {2}, {1, 2}), Scalar(2)}).status().message(),
            "Alloc: the value of shape (2,) does not broadcast to shape (2, 3)");
  EXPECT_EQ(
      (*f)({*Tensor::Of<double>(DType::kFloat64, {3}, {1, 2, 3}), Scalar(-1)}).status().message(),
      "Alloc: negative dimension in shape (-1, 3)");
  EXPECT_EQ(alloc(dmatrix(), {constant(3)}).status().message(),
            "Alloc: the value has type TensorType(float64, (?, ?)), of more than the 1 dims "
            "requested");
  EXPECT_EQ(alloc(dscalar(), {dscalar()}).status().message(),
            "Alloc: input 1 has type TensorType(float64, ()) but an integer scalar is needed");
}

TEST(AllocTest, ARangeAndEye) {
  Var r = arange(constant(2), constant(11), constant(3));
  EXPECT_EQ(r->owner()->op().Name(), "ARange{dtype='int64'}");
  EXPECT_EQ(r->type()->ToString(), "TensorType(int64, (3,))");
  Var rf = arange(constant(1.0), constant(0.0), constant(-0.25));
  EXPECT_EQ(rf->type()->ToString(), "TensorType(float64, (4,))");
  Var e = eye(constant(2), constant(3), constant(1));
  EXPECT_EQ(e->owner()->op().Name(), "Eye{dtype='float64'}");
  auto out = testing::Eval({}, {r, rf, e, arange(constant(5)), eye(2, DType::kInt8)}, {});
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[0].ToString(), "[2 5 8]");
  EXPECT_EQ(out[1].ToString(), "[1.   0.75 0.5  0.25]");
  EXPECT_EQ(out[2].ToString(), "[[0. 1. 0.]\n [0. 0. 1.]]");
  EXPECT_EQ(out[3].ToString(), "[0 1 2 3 4]");
  EXPECT_EQ(out[4].ToString(), "[[1 0]\n [0 1]]");
  EXPECT_EQ(arange(constant(0), constant(3), constant(0)).status().message(),
            "ARange{dtype='int64'}: step cannot be 0");
}

TEST(AllocTest, JoinStackSplit) {
  Var a = dmatrix("a"), b = imatrix("b");
  Var j = concatenate({a, b}, 1);
  EXPECT_EQ(j->owner()->op().Name(), "Join");
  EXPECT_EQ(j->type()->ToString(), "TensorType(float64, (?, ?))");
  EXPECT_EQ(concatenate({tensor(DType::kInt8, {2, 3}), tensor(DType::kInt8, {4, 3})}, 0)
                ->type()
                ->ToString(),
            "TensorType(int8, (6, 3))");
  EXPECT_EQ(concatenate({tensor(DType::kInt8, {2, 3}), tensor(DType::kInt8, {2, 4})}, 0)
                .status()
                .message(),
            "Join: input 2 has type TensorType(int8, (2, 4)) but input 1 has "
            "TensorType(int8, (2, 3)): dim 1 differs");
  EXPECT_EQ(concatenate({dmatrix(), dvector()}).status().message(),
            "Join: input 2 has type TensorType(float64, (?,)) but input 1 has "
            "TensorType(float64, (?, ?)): all tensors need the same number of dims");
  Var v = dvector("v"), w = dvector("w");
  Var s = stack({v, w}, 1);
  EXPECT_EQ(s->type()->ToString(), "TensorType(float64, (?, 2))");
  std::vector<Var> parts = split(v, {1, 2});
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0]->owner()->op().Name(), "Split{2}");
  Tensor av = *Tensor::Of<double>(DType::kFloat64, {2, 2}, {1, 2, 3, 4});
  Tensor bv = *Tensor::Of<int64_t>(DType::kInt32, {2, 1}, {5, 6});
  Tensor vv = *Tensor::Of<double>(DType::kFloat64, {3}, {1, 2, 3});
  Tensor wv = *Tensor::Of<double>(DType::kFloat64, {3}, {4, 5, 6});
  auto out = testing::Eval({a, b, v, w}, {j, s, parts[0], parts[1]}, {av, bv, vv, wv});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].ToString(), "[[1. 2. 5.]\n [3. 4. 6.]]");
  EXPECT_EQ(out[1].ToString(), "[[1. 4.]\n [2. 5.]\n [3. 6.]]");
  EXPECT_EQ(out[2].ToString(), "[1.]");
  EXPECT_EQ(out[3].ToString(), "[2. 3.]");
  auto f = function({v}, {split(v, {1, 1})[0]});
  ASSERT_TRUE(f.ok());
  EXPECT_EQ((*f)({vv}).status().message(), "Split{2}: the sizes add up to 2 but axis 0 has size 3");
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// Sizes from user values are checked before anything is allocated: no overflow, no crash.
TEST(HostileInputsTest, HugeOrOverflowingShapesAreErrors) {
  Var n = lscalar("n");
  auto eye_f = function({n}, {eye(n, n, constant(0))});
  ASSERT_TRUE(eye_f.ok());
  EXPECT_EQ((*eye_f)({Scalar(int64_t{1} << 32)}).status().message(),
            "Eye{dtype='float64'}: shape (4294967296, 4294967296) needs more than "
            "70368744177664 bytes");
  auto alloc_f = function({n}, {zeros({constant(3), n})});
  ASSERT_TRUE(alloc_f.ok());
  EXPECT_FALSE((*alloc_f)({Scalar(6148914691236517206)}).ok());
  Var x = dvector("x");
  Var s = lvector("s");
  auto reshape_f = function({x, s}, {reshape(x, specify_shape(s, {3}))});
  ASSERT_TRUE(reshape_f.ok());
  EXPECT_FALSE(
      (*reshape_f)({Tensor::Zeros(DType::kFloat64, {4}),
                    *Tensor::Of<int64_t>(DType::kInt64, {3}, {-1, 3, 6148914691236517206})})
          .ok());
  auto split_f = function({x}, {split(x, {int64_t{1} << 62, int64_t{1} << 62, 3, 1})[0]});
  ASSERT_TRUE(split_f.ok());
  EXPECT_EQ((*split_f)({Tensor::Zeros(DType::kFloat64, {4})}).status().message(),
            "Split{4}: size 4611686018427387904 of piece 0 does not fit axis 0 of size 4");
  Var lo = dscalar("lo");
  auto range_f = function({lo}, {arange(lo, constant(1.0), constant(1.0))});
  ASSERT_TRUE(range_f.ok());
  EXPECT_EQ((*range_f)({*Tensor::Of<double>(DType::kFloat64, {}, {-INFINITY})}).status().message(),
            "ARange{dtype='float64'}: cannot make a range from -inf to 1 by 1");
  auto cum_f = function({x}, {cumsum(reshape(x, {3, 0}), 0)});
  ASSERT_TRUE(cum_f.ok());
  auto empty = (*cum_f)({Tensor::Zeros(DType::kFloat64, {0})});
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ((*empty)[0].shape(), (Shape{3, 0}));
}

TEST(HostileInputsTest, IndicesAndSteps) {
  Var m = dmatrix("m"), step = lscalar("step");
  auto f = function({m, step}, {subtensor(m, {Slice{std::nullopt, std::nullopt, step}})});
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(
      (*f)({Tensor::Zeros(DType::kFloat64, {2, 2}), Scalar(std::numeric_limits<int64_t>::min())})
          .status()
          .message(),
      "Subtensor{::int64}: slice step is out of range");
  Var idx = tensor(DType::kUInt64, {kUnknownDim}, "idx");
  auto g = function({m, idx}, {take(m, idx)});
  ASSERT_TRUE(g.ok());
  Tensor huge = Tensor::Empty(DType::kUInt64, {1});
  huge.data<uint64_t>()[0] = ~uint64_t{0};
  EXPECT_EQ((*g)({Tensor::Zeros(DType::kFloat64, {2, 2}), huge}).status().message(),
            "AdvancedSubtensor1: index 18446744073709551615 is out of bounds for axis 0 with "
            "size 2");
}

}  // namespace
}  // namespace kiln
