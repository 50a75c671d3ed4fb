#include "core/ops/shape.h"

#include <gtest/gtest.h>

#include "core/kiln.h"
#include "tests/testing/eval.h"
#include "tests/testing/numpy_cases.h"

namespace kiln {
namespace {

// 0, 1, 2, ... in float64.
Tensor Iota(Shape shape) {
  return testing::Filled(DType::kFloat64, std::move(shape), [](int64_t i) { return double(i); });
}

TEST(ShapeTest, ShapeAndShapeI) {
  Var x = dtensor3("x");
  EXPECT_EQ(shape(x)->owner()->op().Name(), "Shape");
  EXPECT_EQ(shape(x)->type()->ToString(), "TensorType(int64, (3,))");
  EXPECT_EQ(shape_i(x, -1)->owner()->op().Name(), "Shape_i{2}");
  EXPECT_EQ(shape_i(x, 3).status().message(),
            "Shape_i{3}: input 0 has type TensorType(float64, (?, ?, ?)), which has no dim 3");
  auto out = testing::Eval({x}, {shape(x), shape_i(x, 1)}, {Iota({2, 3, 4})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].ToString(), "[2 3 4]");
  EXPECT_EQ(out[1].ToString(), "3");
}

TEST(ShapeTest, ReshapeWithConstantShape) {
  Var x = dmatrix("x");
  Var y = reshape(x, {3, -1});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->owner()->op().Name(), "Reshape{2}");
  EXPECT_EQ(y->type()->ToString(), "TensorType(float64, (3, ?))");
  Var known = reshape(tensor(DType::kInt8, {2, 6}), {-1, 4});
  EXPECT_EQ(known->type()->ToString(), "TensorType(int8, (3, 4))");
  EXPECT_EQ(reshape(tensor(DType::kInt8, {2, 6}), {5, -1}).status().message(),
            "Reshape{2}: cannot reshape TensorType(int8, (2, 6)) into shape (5, -1)");
  EXPECT_EQ(reshape(x, {-1, -1}).status().message(),
            "Reshape{2}: the shape (-1, -1) has a negative dim other than one -1");
  auto out = testing::Eval({x}, {y}, {Iota({2, 3})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].ToString(), "[[0. 1.]\n [2. 3.]\n [4. 5.]]");
}

TEST(ShapeTest, ReshapeErrorsAtRunTimeAndStridedInputs) {
  Var x = dmatrix("x");
  Var s = lvector("s");
  Var y = reshape(x, specify_shape(s, {2}));
  ASSERT_TRUE(y.ok()) << y.status();
  auto f = function({x, s}, {y});
  ASSERT_TRUE(f.ok()) << f.status();
  auto bad = (*f)({Iota({2, 3}), *Tensor::Of<int64_t>(DType::kInt64, {2}, {4, 2})});
  EXPECT_EQ(bad.status().message(), "Reshape{2}: cannot reshape array of size 6 into shape (4, 2)");
  // A transposed (non-contiguous) input reshapes in C order of its logical layout.
  Tensor t = Iota({2, 3}).View({3, 2}, {1, 3});
  auto good = (*f)({t, *Tensor::Of<int64_t>(DType::kInt64, {2}, {2, 3})});
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_EQ((*good)[0].ToString(), "[[0. 3. 1.]\n [4. 2. 5.]]");
}

TEST(ShapeTest, SpecifyShape) {
  Var x = dmatrix("x");
  Var y = specify_shape(x, {kUnknownDim, 3});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->type()->ToString(), "TensorType(float64, (?, 3))");
  EXPECT_EQ(y->owner()->op().Name(), "SpecifyShape");
  auto f = function({x}, {y});
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE((*f)({Iota({5, 3})}).ok());
  EXPECT_EQ((*f)({Iota({5, 4})}).status().message(),
            "SpecifyShape: dim 1 of input has shape 4, expected 3.");
  EXPECT_EQ(specify_shape(x, {3}).status().message(),
            "SpecifyShape: input 0 has type TensorType(float64, (?, ?)) but 1 dims were given");
  EXPECT_EQ(specify_shape(tensor(DType::kFloat64, {2}), {3}).status().message(),
            "SpecifyShape: input 0 has type TensorType(float64, (2,)), whose dim 0 cannot be 3");
}

TEST(ShapeTest, FlattenExpandDimsSqueeze) {
  Var x = dtensor3("x");
  EXPECT_EQ(flatten(x)->type()->ToString(), "TensorType(float64, (?,))");
  EXPECT_EQ(flatten(x, 2)->type()->ToString(), "TensorType(float64, (?, ?))");
  EXPECT_EQ(flatten(x, 4).status().message(), "flatten: ndim 4 is not in [1, 3]");
  EXPECT_EQ(expand_dims(dmatrix(), -1)->type()->ToString(), "TensorType(float64, (?, ?, 1))");
  EXPECT_EQ(expand_dims(dmatrix(), 0)->owner()->op().Name(), "InplaceDimShuffle{x,0,1}");
  EXPECT_EQ(squeeze(tensor(DType::kInt32, {1, kUnknownDim, 1}))->type()->ToString(),
            "TensorType(int32, (?,))");
  EXPECT_EQ(squeeze(dmatrix(), {0}).status().message(),
            "squeeze: cannot squeeze axis 0 of TensorType(float64, (?, ?)), which is not of "
            "static size 1");
  auto out = testing::Eval({x}, {flatten(x, 2), make_vector({shape_i(x, 0), constant(7)})},
                           {Iota({2, 2, 2})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].ToString(), "[[0. 1. 2. 3.]\n [4. 5. 6. 7.]]");
  EXPECT_EQ(out[1].ToString(), "[2 7]");
  EXPECT_EQ(make_vector({dscalar()}).status().message(),
            "MakeVector{dtype='int64'}: input 0 has type TensorType(float64, ()) but scalars "
            "that cast safely to int64 are needed");
}

}  // namespace
}  // namespace kiln
