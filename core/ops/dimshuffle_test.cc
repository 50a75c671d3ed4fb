#include "core/ops/dimshuffle.h"

#include <gtest/gtest.h>

#include "core/kiln.h"

namespace kiln {
namespace {

TEST(DimShuffleTest, NamesAndTypes) {
  Var row = dimshuffle(dvector("v"), {kX, 0});
  ASSERT_TRUE(row.ok());
  EXPECT_EQ(row->owner()->op().Name(), "InplaceDimShuffle{x,0}");
  EXPECT_EQ(row->type()->ToString(), "TensorType(float64, (1, ?))");
  Var t = transpose(tensor(DType::kInt8, {2, kUnknownDim, 5}));
  EXPECT_EQ(t->owner()->op().Name(), "InplaceDimShuffle{2,1,0}");
  EXPECT_EQ(t->type()->ToString(), "TensorType(int8, (5, ?, 2))");
  // Dropping a broadcastable dim.
  Var dropped = dimshuffle(irow(), {1});
  EXPECT_EQ(dropped->type()->ToString(), "TensorType(int32, (?,))");
  absl::StatusOr<OpPtr> plain = DimShuffle::Make({false, false}, {1, 0}, /*inplace=*/false);
  EXPECT_EQ((*plain)->Name(), "DimShuffle{1,0}");
  EXPECT_TRUE((*plain)->view_map().empty());
  EXPECT_EQ(dropped->owner()->op().view_map(), (std::vector<std::pair<int, int>>{{0, 0}}));
}

TEST(DimShuffleTest, BadPatternsAreErrors) {
  EXPECT_EQ(dimshuffle(dmatrix(), {0, 2}).status().message(),
            "DimShuffle{0,2}: new_order[1] = 2 is not a dim of an input with 2 dims");
  EXPECT_EQ(dimshuffle(dmatrix(), {0, 0, 1}).status().message(),
            "DimShuffle{0,0,1}: dim 0 appears twice");
  EXPECT_EQ(dimshuffle(dmatrix(), {1}).status().message(),
            "DimShuffle{1}: cannot drop dim 0, which is not broadcastable, of an input with "
            "broadcastable pattern (False, False)");
  absl::StatusOr<OpPtr> op = DimShuffle::Make({true, false}, {1});
  ASSERT_TRUE(op.ok());
  EXPECT_EQ((*op)->MakeNode({dmatrix("m").ptr()}).status().message(),
            "InplaceDimShuffle{1}: input 0 has type TensorType(float64, (?, ?)) but the op "
            "expects broadcastable pattern (True, False), got (False, False)");
  EXPECT_EQ((*op)->MakeNode({dvector("v").ptr()}).status().message(),
            "InplaceDimShuffle{1}: input 0 has type TensorType(float64, (?,)) but the op "
            "expects broadcastable pattern (True, False), got (False,)");
}

TEST(DimShuffleTest, PerformIsAView) {
  Var m = dmatrix("m");
  Var t = transpose(m);
  Tensor in = *Tensor::Of<double>(DType::kFloat64, {2, 3}, {1, 2, 3, 4, 5, 6});
  const std::vector<Tensor> args = {in};
  std::vector<Tensor> view(1);
  ASSERT_TRUE(t->owner()->op().Perform(*t->owner(), args, view).ok());
  EXPECT_TRUE(view[0].SharesBufferWith(in));
  // A function's result never aliases its argument.
  auto f = function({m}, {t});
  ASSERT_TRUE(f.ok());
  auto out = (*f)({in});
  ASSERT_TRUE(out.ok());
  EXPECT_FALSE((*out)[0].SharesBufferWith(in));
  EXPECT_EQ((*out)[0].shape(), (Shape{3, 2}));
  EXPECT_EQ((*out)[0].ToString(), "[[1. 4.]\n [2. 5.]\n [3. 6.]]");
}

TEST(DimShuffleTest, EqualPropsAreEqualOps) {
  OpPtr a = *DimShuffle::Make({false}, {kX, 0});
  OpPtr b = *DimShuffle::Make({false}, {kX, 0});
  OpPtr c = *DimShuffle::Make({true}, {kX, 0});
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(a->Hash(), b->Hash());
  EXPECT_FALSE(*a == *c);
}

}  // namespace
}  // namespace kiln
