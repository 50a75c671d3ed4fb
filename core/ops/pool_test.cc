// Pool, MaxPoolGrad, AveragePoolGrad and DownsampleFactorMaxGradGrad against Aesara 2.9.4
// (tests/golden/aesara_pool.txt, written by tests/golden/gen_pool_cases.py), inferred shapes,
// names and types as Aesara's, every error, and finite-difference gradients.
#include "core/ops/pool.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/graph/op_registry.h"
#include "core/kiln.h"
#include "core/ops/op_util.h"
#include "core/ops/pool_kernels.h"
#include "core/tensor/call_limits.h"
#include "tests/testing/numpy_cases.h"
#include "tests/testing/pool_cases.h"

namespace kiln {
namespace {

using testing::IntConst;
using testing::Ints;
using testing::IntTensor;
using testing::PoolOp;
using testing::PoolOpAttrs;

absl::StatusOr<std::vector<Tensor>> Evaluate(const std::vector<Var>& in,
                                             const std::vector<Var>& out,
                                             const std::vector<Tensor>& args) {
  auto f = function(in, out);
  if (!f.ok()) return f.status();
  return (*f)(args);
}

void ExpectClose(const Tensor& got, const Shape& shape, const std::vector<double>& want,
                 double rtol) {
  ASSERT_EQ(got.shape(), shape);
  const std::vector<double> g = testing::Elements(got);
  ASSERT_EQ(g.size(), want.size());
  for (size_t i = 0; i < g.size(); ++i) {
    EXPECT_NEAR(g[i], want[i], rtol * (1 + std::abs(want[i]))) << "entry " << i;
  }
}

// Every case of the golden file, through the op the registry makes from its props; for Pool
// also with ws, stride and pad as symbolic inputs, and the inferred shape against the value's.
TEST(PoolTest, MatchesAesara) {
  int count = 0;
  for (const auto& c : testing::ReadCases("tests/golden/aesara_pool.txt")) {
    ASSERT_EQ(c.size(), 14u);
    SCOPED_TRACE(absl::StrJoin(c.begin(), c.begin() + 9, "|"));
    const std::string& name = c[0];
    const int nd = std::stoi(c[1]);
    const bool ib = c[2] == "1";
    const std::string& mode = c[3];
    const std::vector<int64_t> ws = Ints(c[4]), st = Ints(c[5]), pad = Ints(c[6]);
    const Tensor xv = testing::MakeTensor(c[7], c[8], c[9]);
    const Var x = tensor(xv.dtype(), StaticShape(xv.ndim()), "x");
    const double rtol = xv.dtype() == DType::kFloat32 ? 2e-6 : 1e-12;
    const Shape want_shape = testing::ParseShape(c[12]);
    const std::vector<double> want = testing::ParseValues(c[13]);
    const OpPtr pool = PoolOp("Pool", ib, mode, nd);
    const Var y = ApplyOp(pool, {x, IntConst(ws), IntConst(st), IntConst(pad)});
    ASSERT_TRUE(y.ok()) << y.status();
    std::vector<Var> in = {x};
    std::vector<Tensor> args = {xv};
    Var out;
    if (name == "Pool") {
      out = y;
      // ws, stride and pad as inputs: the same values, and the inferred shape.
      const Var w = lvector("ws"), s = lvector("st"), p = lvector("pad");
      const Var z = ApplyOp(pool, {x, w, s, p});
      absl::StatusOr<std::vector<VariablePtr>> dims = infer_shape(z);
      ASSERT_TRUE(dims.ok()) << dims.status();
      std::vector<Var> outs = {z};
      for (const VariablePtr& d : *dims) outs.push_back(d);
      auto r = Evaluate({x, w, s, p}, outs, {xv, IntTensor(ws), IntTensor(st), IntTensor(pad)});
      ASSERT_TRUE(r.ok()) << r.status();
      ExpectClose((*r)[0], want_shape, want, rtol);
      for (size_t d = 0; d < want_shape.size(); ++d)
        EXPECT_EQ(ScalarInt((*r)[1 + d]), want_shape[d]);
    } else if (name == "GradOfGrad") {
      const Var g = grad(sum(y * y), x);
      out = grad(sum(g * g), x);
    } else {
      const Tensor av = testing::MakeTensor(c[7], c[10], c[11]);
      const Var a = tensor(av.dtype(), StaticShape(av.ndim()), "a");
      in.push_back(a);
      args.push_back(av);
      const OpPtr op = PoolOp(name, ib, mode, nd);
      if (name == "AveragePoolGrad") {
        out = ApplyOp(op, {x, a, IntConst(ws), IntConst(st), IntConst(pad)});
      } else {
        out = ApplyOp(op, {x, y, a, IntConst(ws), IntConst(st), IntConst(pad)});
      }
    }
    ASSERT_TRUE(out.ok()) << out.status();
    auto r = Evaluate(in, {out}, args);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ((*r)[0].dtype(), xv.dtype());
    ExpectClose((*r)[0], want_shape, want, rtol);
    ++count;
  }
  EXPECT_GT(count, 200);
}

TEST(PoolTest, NamesTypesAndIdentity) {
  const Var x = dtensor4("x");
  const Var y = pool_2d(x, {2, 2}, true);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->owner()->op().Name(), "Pool{ignore_border=True, mode='max', ndim=2}");
  EXPECT_EQ(y->type()->ToString(), "TensorType(float64, (?, ?, ?, ?))");
  EXPECT_EQ(y->owner()->num_inputs(), 4);
  EXPECT_EQ(y->owner()->inputs()[1]->type()->ToString(), "TensorType(int64, (2,))");
  // Aesara keeps the leading dims that are broadcastable.
  const Var b = tensor(DType::kInt32, {1, std::nullopt, 3, 4}, "b");
  EXPECT_EQ(pool_2d(b, {2, 2}, true)->type()->ToString(), "TensorType(int32, (1, ?, ?, ?))");
  EXPECT_EQ(pool_3d(ftensor3("t"), {1, 2, 2}, false, std::nullopt, {0, 0, 0}, "sum")
                ->owner()
                ->op()
                .Name(),
            "Pool{ignore_border=False, mode='sum', ndim=3}");
  // The gradients' ops, as Aesara names them.
  const Var g = grad(sum(y * y), x);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->owner()->op().Name(), "MaxPoolGrad{ignore_border=True, mode='max', ndim=2}");
  EXPECT_EQ(g->type()->ToString(), "TensorType(float64, (?, ?, ?, ?))");
  const Var gg = grad(sum(g * g), x);
  ASSERT_TRUE(gg.ok()) << gg.status();
  const std::string printed = DebugPrint({gg});
  EXPECT_NE(printed.find("DownsampleFactorMaxGradGrad{ignore_border=True, mode='max', ndim=2}"),
            std::string::npos)
      << printed;
  const Var a = pool_2d(x, {2, 2}, false, std::vector<int64_t>{1, 1}, {0, 0}, "average_exc_pad");
  const Var ga = grad(sum(a), x);
  EXPECT_EQ(ga->owner()->op().Name(),
            "AveragePoolGrad{ignore_border=False, mode='average_exc_pad', ndim=2}");
  EXPECT_EQ(max_pool_2d_same_size(x, {2, 2})->owner()->op().Name(),
            "MaxPoolGrad{ignore_border=True, mode='max', ndim=2}");
  // One identity whichever way the op was made; the defaults are Aesara's.
  const Op& op = y->owner()->op();
  absl::StatusOr<OpPtr> again = MakeOp(op.type_name(), op.Attrs());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(**again == op);
  EXPECT_EQ((*again)->Hash(), op.Hash());
  EXPECT_EQ((*MakeOp("Pool", {}))->Name(), "Pool{ignore_border=False, mode='max', ndim=2}");
  EXPECT_EQ((*MakeOp("AveragePoolGrad", {}))->Name(),
            "AveragePoolGrad{ignore_border=False, mode='average_inc_pad', ndim=2}");
  EXPECT_EQ((*MakeOp("DownsampleFactorMaxGradGrad", {}))->Name(),
            "DownsampleFactorMaxGradGrad{ignore_border=False, mode='max', ndim=2}");
  EXPECT_FALSE(*pool_2d(x, {2, 2}, false)->owner()->op_ptr() == op);
}

TEST(PoolTest, MaxPoolSameSizeKeepsOnlyTheMaxima) {
  const Var x = dtensor4("x");
  const Tensor xv = testing::Filled(DType::kFloat64, {1, 1, 2, 4}, [](int64_t i) {
    return std::vector<double>{1, 5, 2, 0, 3, 4, 7, 6}[i];
  });
  auto r = Evaluate({x}, {max_pool_2d_same_size(x, {2, 2})}, {xv});
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectClose((*r)[0], {1, 1, 2, 4}, {0, 5, 0, 0, 0, 0, 7, 0}, 0);
}

// A value through Pool{ignore_border, mode, ndim}(x, ws, stride, pad) with the three as inputs.
absl::StatusOr<std::vector<Tensor>> RunPool(bool ib, const std::string& mode, int nd,
                                            const Tensor& xv, const std::vector<int64_t>& ws,
                                            const std::vector<int64_t>& st,
                                            const std::vector<int64_t>& pad) {
  const Var x = tensor(xv.dtype(), StaticShape(xv.ndim()), "x");
  const Var w = lvector("ws"), s = lvector("st"), p = lvector("pad");
  return Evaluate({x, w, s, p}, {ApplyOp(PoolOp("Pool", ib, mode, nd), {x, w, s, p})},
                  {xv, IntTensor(ws), IntTensor(st), IntTensor(pad)});
}

std::string Message(const absl::StatusOr<std::vector<Tensor>>& r) {
  return r.ok() ? "ok" : std::string(r.status().message());
}

TEST(PoolTest, BuildErrors) {
  const Var x = dtensor4("x");
  EXPECT_EQ(pool_2d(dvector("v"), {2, 2}, true).status().message(),
            "pool_2d requires a dimension >= 2");
  EXPECT_EQ(pool_3d(dmatrix("m"), {2, 2, 2}, true).status().message(),
            "pool_3d requires a dimension >= 3");
  EXPECT_EQ(pool_2d(x, {2, 2}, false, std::nullopt, {1, 1}).status().message(),
            "Pool{ignore_border=False, mode='max', ndim=2}: padding works only with "
            "ignore_border=True");
  EXPECT_EQ(pool_2d(x, {2, 2}, true, std::nullopt, {2, 1}).status().message(),
            "Pool{ignore_border=True, mode='max', ndim=2}: padding must be smaller than strides "
            "(pad[0] = 2, ws[0] = 2)");
  EXPECT_EQ(pool_2d(x, {2, 2, 3}, true).status().message(),
            "Pool{ignore_border=True, mode='max', ndim=2}: input 1 (ws) has type "
            "TensorType(int64, (3,)) but ndim=2 needs 2 entries");
  EXPECT_EQ(pool_2d(x, {2, 2}, true, std::nullopt, {0, 0}, "median").status().message(),
            "Pool: attribute 'mode' must be one of 'max', 'sum', 'average_inc_pad', "
            "'average_exc_pad'; got 'median'");
  const OpPtr pool = PoolOp("Pool", true, "max", 2);
  EXPECT_EQ(ApplyOp(pool, {x, dvector("w"), lvector("s"), lvector("p")}).status().message(),
            "Pool{ignore_border=True, mode='max', ndim=2}: input 1 (ws) has type "
            "TensorType(float64, (?,)): Pool downsample parameters must be ints.");
  EXPECT_EQ(ApplyOp(pool, {x, lvector("w"), fvector("s"), lvector("p")}).status().message(),
            "Pool{ignore_border=True, mode='max', ndim=2}: input 2 (stride) has type "
            "TensorType(float32, (?,)): Stride parameters must be ints.");
  EXPECT_EQ(ApplyOp(pool, {x, lvector("w"), lvector("s"), dvector("p")}).status().message(),
            "Pool{ignore_border=True, mode='max', ndim=2}: input 3 (pad) has type "
            "TensorType(float64, (?,)): Padding parameters must be ints.");
  EXPECT_EQ(ApplyOp(pool, {x, lmatrix("w"), lvector("s"), lvector("p")}).status().message(),
            "Pool{ignore_border=True, mode='max', ndim=2}: input 1 (ws) has type "
            "TensorType(int64, (?, ?)) but an integer vector is needed");
  EXPECT_EQ(ApplyOp(pool, {dvector("v"), lvector("w")}).status().message(),
            "Pool{ignore_border=True, mode='max', ndim=2}: input 0 (x) has type "
            "TensorType(float64, (?,)) but a real tensor of at least 2 dims is needed");
  EXPECT_EQ(
      ApplyOp(pool, {tensor(DType::kComplex128, StaticShape(2)), lvector("w")}).status().message(),
      "Pool{ignore_border=True, mode='max', ndim=2}: input 0 (x) has type "
      "TensorType(complex128, (?, ?)) but a real tensor of at least 2 dims is needed");
  EXPECT_EQ(ApplyOp(pool, {x}).status().message(),
            "Pool{ignore_border=True, mode='max', ndim=2}: expects 2 to 4 inputs (x, ws, stride, "
            "pad)");
  // Aesara's make_node: stride defaults to ws, pad to zeros.
  const Var two = ApplyOp(pool, {x, IntConst({2, 2})});
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(two->owner()->num_inputs(), 4);
  const OpPtr grad_op = PoolOp("MaxPoolGrad", true, "max", 2);
  EXPECT_EQ(ApplyOp(grad_op, {x, dmatrix("m"), x, IntConst({2, 2})}).status().message(),
            "MaxPoolGrad{ignore_border=True, mode='max', ndim=2}: input 1 has type "
            "TensorType(float64, (?, ?)) but a tensor of x's 4 dims is needed");
  EXPECT_EQ(MakeOp("MaxPoolGrad", PoolOpAttrs(true, "sum", 2)).status().message(),
            "MaxPoolGrad: attribute 'mode' must be one of 'max'; got 'sum'");
  EXPECT_EQ(MakeOp("AveragePoolGrad", PoolOpAttrs(true, "max", 2)).status().message(),
            "AveragePoolGrad: attribute 'mode' must be one of 'sum', 'average_inc_pad', "
            "'average_exc_pad'; got 'max'");
  EXPECT_EQ(MakeOp("Pool", PoolOpAttrs(true, "max", 0)).status().message(),
            "Pool: attribute 'ndim' must be in [1, 64]; got 0");
}

TEST(PoolTest, RunErrorsAndHostileSizes) {
  const Tensor xv = testing::Filled(DType::kFloat64, {1, 1, 4, 4}, [](int64_t i) { return i; });
  const std::string op = "Pool{ignore_border=True, mode='max', ndim=2}: ";
  EXPECT_EQ(Message(RunPool(true, "max", 2, xv, {2, 2, 3}, {2, 2}, {0, 0})),
            op + "ws must be a vector of size 2; got shape (3,)");
  EXPECT_EQ(Message(RunPool(true, "max", 2, xv, {2, 2}, {2, 0}, {0, 0})),
            op + "stride[1] is 0: strides must be >= 1");
  EXPECT_EQ(Message(RunPool(true, "max", 2, xv, {2, 2}, {-1, 2}, {0, 0})),
            op + "stride[0] is -1: strides must be >= 1");
  EXPECT_EQ(Message(RunPool(true, "max", 2, xv, {0, 2}, {1, 2}, {0, 0})),
            op + "ws[0] is 0: windows must be >= 1");
  EXPECT_EQ(Message(RunPool(true, "max", 2, xv, {2, 2}, {2, 2}, {0, -1})),
            op + "pad[1] is -1: padding must be >= 0");
  EXPECT_EQ(Message(RunPool(true, "max", 2, xv, {2, 2}, {2, 2}, {2, 0})),
            op + "padding must be smaller than strides (pad[0] = 2, ws[0] = 2)");
  EXPECT_EQ(Message(RunPool(false, "max", 2, xv, {2, 2}, {2, 2}, {1, 0})),
            "Pool{ignore_border=False, mode='max', ndim=2}: padding must be zero when ignore "
            "border is False");
  // A window of 2^31: no window fits (ignore_border) or one partial window covers x.
  const int64_t big = int64_t{1} << 31;
  absl::StatusOr<std::vector<Tensor>> r = RunPool(true, "max", 2, xv, {big, 2}, {big, 2}, {0, 0});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].shape(), (Shape{1, 1, 0, 2}));
  r = RunPool(false, "max", 2, xv, {big, big}, {1, 1}, {0, 0});
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectClose((*r)[0], {1, 1, 1, 1}, {15}, 0);
  r = RunPool(false, "average_inc_pad", 2, xv, {big, 2}, {big, 3}, {0, 0});
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectClose((*r)[0], {1, 1, 1, 2}, {6.5, 9}, 0);
  // Paddings near 2^31 and 2^62: an output of 2^62 elements, or a padded length past int64,
  // refused before anything is allocated.
  EXPECT_NE(Message(RunPool(true, "max", 2, xv, {big, big}, {1, 1}, {big - 1, big - 1}))
                .find("Pool{ignore_border=True, mode='max', ndim=2}"),
            std::string::npos);
  const int64_t huge = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(Message(RunPool(true, "sum", 2, xv, {huge, 2}, {1, 1}, {huge - 1, 0})),
            "Pool{ignore_border=True, mode='sum', ndim=2}: pad[0] = 9223372036854775806 is too "
            "large for x's dim of 4");
  // An empty x: no max to take in the window padding makes; the sum's 0.
  const Tensor empty = Tensor::Zeros(DType::kFloat64, {2, 0, 3});
  EXPECT_EQ(Message(RunPool(true, "max", 2, empty, {2, 2}, {1, 1}, {1, 1})),
            op + "x has shape (2, 0, 3): a window holds no element to take the max of");
  r = RunPool(true, "sum", 2, empty, {2, 2}, {1, 1}, {1, 1});
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectClose((*r)[0], {2, 1, 4}, std::vector<double>(8, 0.0), 0);
  // Gradients whose gz does not have the pooled shape.
  const Var x = dtensor4("x"), gz = dtensor4("gz");
  const Var ga = ApplyOp(PoolOp("AveragePoolGrad", true, "sum", 2), {x, gz, IntConst({2, 2})});
  EXPECT_EQ(Message(Evaluate({x, gz}, {ga}, {xv, Tensor::Zeros(DType::kFloat64, {1, 1, 3, 2})})),
            "AveragePoolGrad{ignore_border=True, mode='sum', ndim=2}: input 1 (gz) has shape "
            "(1, 1, 3, 2) but pooling x gives (1, 1, 2, 2)");
  const Var m = dtensor4("m");
  const Var gm = ApplyOp(PoolOp("MaxPoolGrad", true, "max", 2), {x, m, gz, IntConst({2, 2})});
  EXPECT_EQ(Message(Evaluate({x, m, gz}, {gm},
                             {xv, Tensor::Zeros(DType::kFloat64, {1, 1, 2, 2}),
                              Tensor::Zeros(DType::kFloat64, {1, 1, 2, 1})})),
            "MaxPoolGrad{ignore_border=True, mode='max', ndim=2}: input 2 (gz) has shape "
            "(1, 1, 2, 1) but pooling x gives (1, 1, 2, 2)");
  const Var gg =
      ApplyOp(PoolOp("DownsampleFactorMaxGradGrad", true, "max", 2), {x, m, gz, IntConst({2, 2})});
  EXPECT_EQ(Message(Evaluate({x, m, gz}, {gg},
                             {xv, Tensor::Zeros(DType::kFloat64, {1, 1, 2, 2}),
                              Tensor::Zeros(DType::kFloat64, {1, 1, 2, 2})})),
            "DownsampleFactorMaxGradGrad{ignore_border=True, mode='max', ndim=2}: input 2 (gz) "
            "has shape (1, 1, 2, 2) but x has shape (1, 1, 4, 4)");
}

// The kernels poll the call's interrupt between rounds of work (a deadline or a cancellation
// stops a long pooling).
TEST(PoolTest, KernelsPollTheInterrupt) {
  const std::function<absl::Status()> cancel = [] { return absl::CancelledError("stopped"); };
  const std::vector<pooling::Dim> dims = {{4096, 64, 1, 0, 4033}};
  const Tensor x = Tensor::Zeros(DType::kFloat64, {128, 4096});
  Tensor out = Tensor::Empty(DType::kFloat64, {128, 4033});
  EXPECT_TRUE(pooling::Forward(pooling::Mode::kSum, 128, dims, x, out).ok());
  InterruptScope scope(&cancel);
  EXPECT_EQ(pooling::Forward(pooling::Mode::kMax, 128, dims, x, out).code(),
            absl::StatusCode::kCancelled);
  Tensor gx = Tensor::Empty(DType::kFloat64, {128, 4096});
  EXPECT_EQ(pooling::AverageGrad(pooling::Mode::kSum, 128, dims, out, gx).code(),
            absl::StatusCode::kCancelled);
}

// The kernels against a direct reference on random geometries (1 to 3 pooled dims, any window,
// stride and padding, both borders, empty dims): every window's members listed one by one.
TEST(PoolTest, KernelsMatchADirectReferenceOnRandomGeometries) {
  std::mt19937_64 rng(7);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int iter = 0; iter < 600; ++iter) {
    const int nd = static_cast<int>(pick(1, 3));
    const bool ib = pick(0, 1) == 1;
    const pooling::Mode mode = static_cast<pooling::Mode>(pick(0, 3));
    const int64_t batch = pick(1, 3);
    std::vector<pooling::Dim> dims;
    int64_t image = 1, out_image = 1;
    bool empty_window = false;
    for (int i = 0; i < nd; ++i) {
      pooling::Dim d{pick(0, 9), pick(1, 6), pick(1, 5), 0, 0};
      d.pad = ib ? pick(0, d.w - 1) : 0;
      d.out = pooling::OutLength(d.n + 2 * d.pad, d.w, d.s, ib);
      empty_window = empty_window || pooling::HasEmptyWindow(d);
      dims.push_back(d);
      image *= d.n, out_image *= d.out;
    }
    if (out_image == 0 || (mode == pooling::Mode::kMax && empty_window)) continue;
    SCOPED_TRACE(iter);
    auto filled = [](int64_t n, double a, double b) {
      return testing::Filled(DType::kFloat64, {n}, [&](int64_t i) { return std::sin(a * i + b); });
    };
    const Tensor x = filled(batch * image, 1.3, iter), gz = filled(batch * out_image, 0.7, 0);
    const Tensor ggx = filled(batch * image, 0.3, 1);
    std::vector<double> out(batch * out_image), gx(batch * image), ggz(batch * out_image);
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t o = 0; o < out_image; ++o) {
        // The window of output o: its members' flat indices, and the two averages' counts.
        std::vector<int64_t> lo(nd), hi(nd), members;
        double inc = 1, exc = 1;
        for (int64_t i = nd - 1, r = o; i >= 0; r /= dims[i].out, --i) {
          const pooling::Dim& d = dims[i];
          const int64_t start = r % d.out * d.s, len = std::min(d.w, d.n + 2 * d.pad - start);
          lo[i] = std::max<int64_t>(start - d.pad, 0);
          hi[i] = std::max(lo[i], std::min(start + len - d.pad, d.n));
          inc *= static_cast<double>(len), exc *= static_cast<double>(hi[i] - lo[i]);
        }
        std::vector<int64_t> idx = lo;
        bool more = exc > 0;
        while (more) {
          int64_t offset = 0;
          for (int i = 0; i < nd; ++i) offset = offset * dims[i].n + idx[i];
          members.push_back(b * image + offset);
          int i = nd - 1;
          for (; i >= 0 && ++idx[i] == hi[i]; --i) idx[i] = lo[i];
          more = i >= 0;
        }
        double acc = mode == pooling::Mode::kMax ? -INFINITY : 0;
        for (int64_t m : members) {
          acc = mode == pooling::Mode::kMax ? std::max(acc, x.data<double>()[m])
                                            : acc + x.data<double>()[m];
        }
        const double div = mode == pooling::Mode::kAverageIncPad   ? inc
                           : mode == pooling::Mode::kAverageExcPad ? exc
                                                                   : 1;
        const int64_t k = b * out_image + o;
        out[k] = acc / div;
        for (int64_t m : members) {
          if (mode != pooling::Mode::kMax) {
            gx[m] += gz.data<double>()[k] / div;
          } else if (x.data<double>()[m] == acc) {
            gx[m] += gz.data<double>()[k];
            ggz[k] += ggx.data<double>()[m];
          }
        }
      }
    }
    auto expect = [](const Tensor& got, const std::vector<double>& want) {
      for (size_t i = 0; i < want.size(); ++i) {
        if (std::isnan(want[i])) {
          EXPECT_TRUE(std::isnan(got.data<double>()[i])) << i;
        } else {
          EXPECT_NEAR(got.data<double>()[i], want[i], 1e-12 * (1 + std::abs(want[i]))) << i;
        }
      }
    };
    Tensor y = Tensor::Empty(DType::kFloat64, {batch * out_image});
    ASSERT_TRUE(pooling::Forward(mode, batch, dims, x, y).ok());
    expect(y, out);
    Tensor g = Tensor::Empty(DType::kFloat64, {batch * image});
    if (mode == pooling::Mode::kMax) {
      ASSERT_TRUE(pooling::MaxGrad(batch, dims, x, y, gz, g).ok());
      Tensor gg = Tensor::Empty(DType::kFloat64, {batch * out_image});
      ASSERT_TRUE(pooling::MaxGradGrad(batch, dims, x, y, ggx, gg).ok());
      expect(gg, ggz);
    } else {
      ASSERT_TRUE(pooling::AverageGrad(mode, batch, dims, gz, g).ok());
    }
    expect(g, gx);
  }
}

// Other dtypes compute in a wider one and come back in x's.
TEST(PoolTest, IntegerAndHalfInputs) {
  const Tensor xv = testing::Filled(DType::kInt8, {1, 5}, [](int64_t i) { return 3 * i - 7; });
  absl::StatusOr<std::vector<Tensor>> r = RunPool(false, "average_exc_pad", 1, xv, {2}, {2}, {0});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].dtype(), DType::kInt8);
  ExpectClose((*r)[0], {1, 3}, {-5, 0, 5}, 0);  // -5.5, 0.5, 5 truncated, as NumPy's astype
  const Tensor hv = testing::Filled(DType::kFloat16, {2, 4}, [](int64_t i) { return 0.5 * i; });
  r = RunPool(true, "max", 1, hv, {3}, {1}, {0});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].dtype(), DType::kFloat16);
  ExpectClose((*r)[0], {2, 2}, {1, 1.5, 3, 3.5}, 0);
}

// The sums of x (x[i] = f(i)) with distinct values.
Tensor Distinct(const Shape& shape) {
  return testing::Filled(DType::kFloat64, shape, [](int64_t i) {
    return std::fmod(0.731 * static_cast<double>(i * 37 % 101), 7.0) - 3.1 + 1e-3 * i;
  });
}

TEST(PoolTest, GradientsMatchFiniteDifferences) {
  struct Case {
    Shape shape;
    int nd;
    bool ib;
    std::vector<int64_t> ws, st, pad;
  };
  const std::vector<Case> cases = {
      {{2, 1, 5, 6}, 2, true, {2, 2}, {2, 2}, {0, 0}},
      {{1, 2, 5, 6}, 2, false, {3, 2}, {1, 3}, {0, 0}},
      {{1, 2, 5, 6}, 2, true, {3, 3}, {2, 1}, {1, 2}},
      {{1, 3, 4, 5}, 3, true, {2, 2, 3}, {1, 2, 2}, {1, 0, 1}},
      {{2, 7}, 1, false, {3}, {2}, {0}},
  };
  for (const Case& c : cases) {
    for (const std::string mode : {"max", "sum", "average_inc_pad", "average_exc_pad"}) {
      SCOPED_TRACE(absl::StrCat(ShapeToString(c.shape), " ", mode, " nd=", c.nd));
      const OpPtr pool = PoolOp("Pool", c.ib, mode, c.nd);
      auto f = [&](const std::vector<Var>& in) {
        return ApplyOp(pool, {in[0], IntConst(c.ws), IntConst(c.st), IntConst(c.pad)});
      };
      const absl::Status s = verify_grad(f, {Distinct(c.shape)});
      EXPECT_TRUE(s.ok()) << s;
      // The second derivative: the gradient's gradient (with respect to x and to gz) through
      // DownsampleFactorMaxGradGrad (max) or Pool (the others).
      auto second = [&](const std::vector<Var>& in) {
        const Var y = f(in);
        return grad(sum(y * y * y), in[0]);
      };
      const absl::Status s2 = verify_grad(second, {Distinct(c.shape)});
      EXPECT_TRUE(s2.ok()) << s2;
    }
  }
}

TEST(PoolTest, GradientOpsMatchFiniteDifferences) {
  const Tensor xv = Distinct({1, 2, 5, 6});
  const std::vector<int64_t> ws = {3, 2}, st = {2, 1}, pad = {1, 1};
  const OpPtr pool = PoolOp("Pool", true, "max", 2);
  // MaxPoolGrad and DownsampleFactorMaxGradGrad are linear in their third input.
  const Var x = constant(xv);
  const Var y = ApplyOp(pool, {x, IntConst(ws), IntConst(st), IntConst(pad)});
  auto r = Evaluate({}, {y}, {});
  ASSERT_TRUE(r.ok()) << r.status();
  const Tensor gz = testing::Filled(DType::kFloat64, (*r)[0].shape(),
                                    [](int64_t i) { return std::sin(0.3 * i); });
  const absl::Status a = verify_grad(
      [&](const std::vector<Var>& in) {
        return ApplyOp(PoolOp("MaxPoolGrad", true, "max", 2),
                       {x, y, in[0], IntConst(ws), IntConst(st), IntConst(pad)});
      },
      {gz});
  EXPECT_TRUE(a.ok()) << a;
  const absl::Status b = verify_grad(
      [&](const std::vector<Var>& in) {
        return ApplyOp(PoolOp("DownsampleFactorMaxGradGrad", true, "max", 2),
                       {x, y, in[0], IntConst(ws), IntConst(st), IntConst(pad)});
      },
      {xv});
  EXPECT_TRUE(b.ok()) << b;
  for (const std::string mode : {"sum", "average_inc_pad", "average_exc_pad"}) {
    const absl::Status c = verify_grad(
        [&](const std::vector<Var>& in) {
          return ApplyOp(PoolOp("AveragePoolGrad", true, mode, 2),
                         {x, in[0], IntConst(ws), IntConst(st), IntConst(pad)});
        },
        {gz});
    EXPECT_TRUE(c.ok()) << mode << ": " << c;
  }
}

}  // namespace
}  // namespace kiln
