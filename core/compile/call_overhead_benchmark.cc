// The fixed cost of calling a compiled function: a one-node function (x + 1 on a scalar) called
// in a loop, against the floor of any call that returns a new value (allocating a scalar tensor
// and writing it), and a * b on 4000 float64 against the same loop written out, each measured in
// the same run, interleaved, five rounds. Prints
//   BENCH call_overhead_1node ns=<median of the rounds> floor_ns=<...> ratio=<...> range=<min-max>
//   BENCH call_mul_4000 ...
//   BENCH call_100_nodes_scalar / call_100_nodes_vec1000: a chain of 100 elementwise nodes
//     (alternately + 0.5 and * 0.999, unoptimized so that none fuse) on a float64 scalar and on
//     1,000 float64, against the same arithmetic written out: the executor's cost per node.
// The linked executor (issue 17) is measured against this line before and after. An argument
// runs only the cases whose names contain it (for a profile of one).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/kiln.h"

namespace kiln {
namespace {

constexpr int kCalls = 200000;
constexpr int kRounds = 5;
const char* only = "";  // the cases run: those whose names contain it

template <typename Fn>
double NsPerCall(Fn fn, int calls) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) fn();
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start)
             .count() /
         calls;
}

// Median and range of `call` and `floor` timed in turn for kRounds rounds of `n` calls each, as
// a BENCH line.
template <typename Call, typename Floor>
void Report(const char* name, Call call, Floor floor, int n = kCalls) {
  if (std::strstr(name, only) == nullptr) return;
  std::vector<double> calls, floors;
  for (int round = 0; round < kRounds; ++round) {
    calls.push_back(NsPerCall(call, n));
    floors.push_back(NsPerCall(floor, n));
  }
  std::sort(calls.begin(), calls.end());
  std::sort(floors.begin(), floors.end());
  const double c = calls[kRounds / 2], f = floors[kRounds / 2];
  std::printf("BENCH %s ns=%.0f floor_ns=%.0f ratio=%.1f range=%.0f-%.0f\n", name, c, f, c / f,
              calls.front(), calls.back());
  std::fflush(stdout);
}

}  // namespace
}  // namespace kiln

int main(int argc, char** argv) {
  using namespace kiln;
  if (argc > 1) only = argv[1];
  Var x = dscalar("x");
  auto f = function({x}, {x + 1.0});
  Var a = dvector("a"), b = dvector("b");
  auto mul = function({a, b}, {a * b});
  if (!f.ok() || !mul.ok()) {
    std::fprintf(stderr, "%s\n", (f.ok() ? mul.status() : f.status()).ToString().c_str());
    return 1;
  }
  const std::vector<Tensor> args = {*Tensor::Of<double>(DType::kFloat64, {}, {2.0})};
  double sink = 0;
  Report(
      "call_overhead_1node",
      [&] {
        auto out = (*f)(args);
        sink += out->front().data<double>()[0];
      },
      [&] {
        Tensor out = Tensor::Zeros(DType::kFloat64, {});
        out.data<double>()[0] = args[0].data<double>()[0] + 1.0;
        sink += out.data<double>()[0];
      });
  // A small array op: the call's fixed cost and its kernel's loop (vectorized or not) together.
  constexpr int64_t kSmall = 4000;
  const Tensor v = *Tensor::FromValues<double>(DType::kFloat64, {kSmall},
                                               std::vector<double>(kSmall, 1.5));
  const std::vector<Tensor> pair = {v, v};
  Report(
      "call_mul_4000",
      [&] {
        auto out = (*mul)(pair);
        sink += out->front().data<double>()[kSmall - 1];
      },
      [&] {
        Tensor out = Tensor::Empty(DType::kFloat64, {kSmall});
        const double* p = v.data<double>();
        double* o = out.data<double>();
        for (int64_t i = 0; i < kSmall; ++i) o[i] = p[i] * p[i];
        sink += o[kSmall - 1];
      });
  // The executor's cost per node: 100 nodes, each a separate step.
  constexpr int kNodes = 100;
  for (const int64_t n : {int64_t{0}, int64_t{1000}}) {
    Var in = n == 0 ? dscalar("s") : dvector("v");
    Var y = in;
    const Var half = scalar_constant(0.5, DType::kFloat64), rate = scalar_constant(0.999, DType::kFloat64);
    for (int i = 0; i < kNodes; ++i) y = i % 2 == 0 ? y + half : y * rate;
    FunctionOptions unoptimized;
    unoptimized.mode = OptimizerMode::kNone;
    auto chain = function({in}, {y}, unoptimized);
    if (!chain.ok()) {
      std::fprintf(stderr, "%s\n", chain.status().ToString().c_str());
      return 1;
    }
    const Shape shape = n == 0 ? Shape{} : Shape{n};
    const std::vector<Tensor> arg = {
        *Tensor::FromValues<double>(DType::kFloat64, shape, std::vector<double>(n == 0 ? 1 : n, 1.5))};
    const int64_t count = n == 0 ? 1 : n;
    Report(
        n == 0 ? "call_100_nodes_scalar" : "call_100_nodes_vec1000",
        [&] {
          auto out = (*chain)(arg);
          sink += out->front().data<double>()[0];
        },
        [&] {
          // What a node must do at least: a new buffer and its loop.
          const double* p = arg[0].data<double>();
          Tensor prev = arg[0];
          for (int i = 0; i < kNodes; ++i) {
            Tensor out = Tensor::Empty(DType::kFloat64, shape);
            const double* q = i == 0 ? p : prev.data<double>();
            double* o = out.data<double>();
            for (int64_t j = 0; j < count; ++j) o[j] = i % 2 == 0 ? q[j] + 0.5 : q[j] * 0.999;
            prev = std::move(out);
          }
          sink += prev.data<double>()[0];
        },
        kCalls / kNodes);
  }
  if (sink < 0) std::printf("unreachable\n");  // keeps the calls from being optimized away
  return 0;
}
