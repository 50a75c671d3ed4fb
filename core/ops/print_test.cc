// Print: the value it shows at each call (captured or on standard output), its name, its
// refusals, its gradient, and that neither constant folding nor merging loses a call's print.
#include "core/ops/print.h"

#include <set>

#include "core/graph/op_registry.h"
#include "core/kiln.h"
#include "gtest/gtest.h"
#include "tests/testing/eval.h"

namespace kiln {
namespace {

TEST(PrintTest, ShowsItsValueAtEachCall) {
  const Var x = dvector("x");
  const Var y = print(x, "hello world") * 2.0;
  absl::StatusOr<Function> f = function({x}, {y});
  ASSERT_TRUE(f.ok()) << f.status();
  const Tensor v = *Tensor::Of<double>(DType::kFloat64, {3}, {1, 2, 3});
  for (int call = 0; call < 2; ++call) {
    PrintCapture capture;
    absl::StatusOr<std::vector<Tensor>> out = (*f)({v});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].ToString(), "[2. 4. 6.]");
    ASSERT_EQ(capture.values().size(), 1u);
    EXPECT_EQ(capture.values()[0].message, "hello world");
    EXPECT_EQ(capture.values()[0].attrs, (std::vector<std::string>{"__str__"}));
    EXPECT_EQ(capture.values()[0].value.ToString(), "[1. 2. 3.]");
  }
  // Without a capture, the value goes to standard output as Aesara's _print_fn writes it.
  const Var z = print(x, "x is", {"__str__", "shape", "dtype", "ndim", "size", "T"});
  ::testing::internal::CaptureStdout();
  testing::Eval({x}, {z}, {v});
  EXPECT_EQ(::testing::internal::GetCapturedStdout(),
            "x is __str__ = [1. 2. 3.]\nx is shape = (3,)\nx is dtype = float64\nx is ndim = 1\n"
            "x is size = 3\nx is T = (shown by the Python client only)\n");
}

TEST(PrintTest, IsNamedAsAesaraNamesItAndChecksItsProps) {
  const Var x = dvector("x");
  const Var y = print(x, "it's", {"__str__", "shape"});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->owner()->op().Name(), "Print{message='it\\'s', attrs=('__str__', 'shape')}");
  EXPECT_EQ(print(x, "m")->owner()->op().Name(), "Print{message='m', attrs=('__str__',)}");
  const OpPtr& op = y->owner()->op_ptr();
  absl::StatusOr<OpPtr> again = MakeOp("Print", op->Attrs());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(**again == *op);
  EXPECT_EQ(print(x, "m", {"shape()"}).status().message(),
            "attribute 'attrs' holds 'shape()', which is not a Python name");
  EXPECT_EQ(print(x, std::string(5000, 'a')).status().message(),
            "attribute 'message' has 5000 bytes, more than 4096");
}

TEST(PrintTest, IsNotFoldedAndPassesTheGradientThrough) {
  const Var x = dvector("x");
  // A Print of a constant still prints at every call; two equal Prints merge into one.
  const Var c = print(constant(2.0), "c");
  const Var y = sum(x * c) + sum(print(x, "x")) + sum(print(x, "x"));
  absl::StatusOr<Function> f = function({x}, {y});
  ASSERT_TRUE(f.ok()) << f.status();
  PrintCapture capture;
  ASSERT_TRUE((*f)({*Tensor::Of<double>(DType::kFloat64, {2}, {1, 2})}).ok());
  ASSERT_EQ(capture.values().size(), 2u);
  std::multiset<std::string> messages;
  for (const PrintedValue& p : capture.values()) messages.insert(p.message);
  EXPECT_EQ(messages, (std::multiset<std::string>{"c", "x"}));
  ASSERT_TRUE(
      verify_grad([](const std::vector<Var>& in) { return sum(exp(print(in[0], "g")) * in[0]); },
                  {*Tensor::Of<double>(DType::kFloat64, {3}, {0.1, -0.4, 0.7})})
          .ok());
}

TEST(PrintTest, ACaptureDropsValuesPastItsLimit) {
  const Var x = dvector("x");
  PrintCapture capture(/*max_bytes=*/1000);  // each value costs 512 bytes and twice its size
  testing::Eval({x}, {print(print(x, "a"), "b")},
                {*Tensor::Of<double>(DType::kFloat64, {2}, {1, 2})});
  EXPECT_EQ(capture.values().size(), 1u);
  EXPECT_EQ(capture.dropped(), 1);
  capture.Clear();
  EXPECT_TRUE(capture.values().empty());
  EXPECT_EQ(capture.dropped(), 0);
}

}  // namespace
}  // namespace kiln
