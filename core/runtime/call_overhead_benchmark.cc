// The fixed cost of calling a compiled function: a one-node function (x + 1 on a scalar) called
// in a loop, against the floor of any call that returns a new value (allocating a scalar tensor
// and writing it), measured in the same run, interleaved, five rounds. Prints
//   BENCH call_overhead_1node ns=<median of the rounds> floor_ns=<...> ratio=<...> range=<min-max>
// The linked executor (issue 17) is measured against this line before and after.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "core/kiln.h"

namespace kiln {
namespace {

constexpr int kCalls = 200000;
constexpr int kRounds = 5;

template <typename Fn>
double NsPerCall(Fn fn) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kCalls; ++i) fn();
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start)
             .count() /
         kCalls;
}

}  // namespace
}  // namespace kiln

int main() {
  using namespace kiln;
  Var x = dscalar("x");
  auto f = function({x}, {x + 1.0});
  if (!f.ok()) {
    std::fprintf(stderr, "%s\n", f.status().ToString().c_str());
    return 1;
  }
  const std::vector<Tensor> args = {*Tensor::Of<double>(DType::kFloat64, {}, {2.0})};
  double sink = 0;
  std::vector<double> calls, floors;
  for (int round = 0; round < kRounds; ++round) {
    calls.push_back(NsPerCall([&] {
      auto out = (*f)(args);
      sink += out->front().data<double>()[0];
    }));
    floors.push_back(NsPerCall([&] {
      Tensor out = Tensor::Zeros(DType::kFloat64, {});
      out.data<double>()[0] = args[0].data<double>()[0] + 1.0;
      sink += out.data<double>()[0];
    }));
  }
  std::sort(calls.begin(), calls.end());
  std::sort(floors.begin(), floors.end());
  const double call = calls[kRounds / 2], floor = floors[kRounds / 2];
  std::printf("BENCH call_overhead_1node ns=%.0f floor_ns=%.0f ratio=%.1f range=%.0f-%.0f\n", call,
              floor, call / floor, calls.front(), calls.back());
  if (sink < 0) std::printf("unreachable\n");  // keeps the calls from being optimized away
  return 0;
}
