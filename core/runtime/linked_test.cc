#include "core/runtime/linked.h"

#include <gtest/gtest.h>

#include "core/kiln.h"

namespace kiln {
namespace {

// A graph and its program (which refers to the graph's nodes, so it lives as long).
struct Linked {
  std::unique_ptr<FunctionGraph> fg;
  std::shared_ptr<const LinkedProgram> program;
  const LinkedProgram* operator->() const { return program.get(); }
};

Linked LinkOf(const std::vector<Var>& inputs, const std::vector<Var>& outputs,
              const LinkOptions& options = {}) {
  std::vector<VariablePtr> ins, outs;
  for (const Var& v : inputs) ins.push_back(v.ptr());
  for (const Var& v : outputs) outs.push_back(v.ptr());
  absl::StatusOr<std::unique_ptr<FunctionGraph>> fg = FunctionGraph::Make(ins, outs);
  EXPECT_TRUE(fg.ok()) << fg.status();
  auto program = LinkedProgram::Link(**fg, options);
  return {*std::move(fg), std::move(program)};
}

// Each value has a slot; a value is released by the step that reads it last, never an input's
// or a constant's; an in-place step on a graph input is planned to copy it first.
TEST(LinkedProgramTest, SlotsReleasesAndInPlacePlans) {
  const Var x = dvector("x");
  const Var e = exp(x);
  const Var y = e * 2.0;                                                     // reads e last
  const Var z = ApplyOp(Elemwise::Make(ScalarOpKind::kNeg, {{0, 0}}), {x});  // overwrites x
  auto p = LinkOf({x}, {y, z});
  ASSERT_EQ(p->steps().size(), 4u);  // exp, DimShuffle of 2.0, mul, neg
  EXPECT_EQ(p->num_inputs(), 1);
  int released = 0;
  bool in_place_seen = false;
  for (const Step& step : p->steps()) {
    for (int s : step.release) {
      EXPECT_GE(s, p->num_inputs());
      ++released;
    }
    if (step.node->op().Name() == "Elemwise{Neg}[(0, 0)]") {
      in_place_seen = true;
      EXPECT_EQ(step.copy_before, std::vector<int>{0});
      EXPECT_TRUE(step.check_before.empty());
    }
  }
  EXPECT_TRUE(in_place_seen);
  EXPECT_EQ(released, 2);  // exp(x) and the DimShuffled constant, both read by mul
  std::vector<Tensor> slots = p->NewSlots();
  const Tensor xv = *Tensor::Of<double>(DType::kFloat64, {2}, {0.0, 1.0});
  slots[0] = xv;
  CallContext ctx;
  ASSERT_TRUE(p->Run(slots, ctx).ok());
  EXPECT_EQ(slots[p->output_slots()[0]].ToString(), "[2.         5.43656366]");
  EXPECT_EQ(slots[p->output_slots()[1]].ToString(), "[-0. -1.]");
  EXPECT_EQ(xv.ToString(), "[0. 1.]");  // the argument was copied, not overwritten
  EXPECT_GE(ctx.peak_bytes, 32);
  EXPECT_TRUE(ctx.step_seconds.empty());  // no profile observer: nothing timed
}

// Observers are attached when linking: the NaN guard names the node, the profiler times steps.
TEST(LinkedProgramTest, ObserversAreAttachedWhenLinking) {
  const Var x = dvector("x");
  const Var y = log(x);
  auto guarded = LinkOf({x}, {y}, {.nan_guard = true, .profile = true});
  std::vector<Tensor> slots = guarded->NewSlots();
  slots[0] = *Tensor::Of<double>(DType::kFloat64, {2}, {1.0, -1.0});
  CallContext ctx;
  EXPECT_EQ(guarded->Run(slots, ctx).message(),
            "NanGuardMode: output 0 of Elemwise{log,no_inplace}(x) holds nan at flat index 1");
  ASSERT_EQ(ctx.step_seconds.size(), 1u);
  auto plain = LinkOf({x}, {y});
  slots = plain->NewSlots();
  slots[0] = *Tensor::Of<double>(DType::kFloat64, {2}, {1.0, -1.0});
  CallContext quiet;
  EXPECT_TRUE(plain->Run(slots, quiet).ok());
}

// Inputs are lent to kernels, not copied: a slot read twice by one node is lent once and read
// again through the lent value, a slot the node overwrites is copied first, and after the step
// every slot still read later holds its value again. Recycled slot sets keep the constants and
// drop every other value (no argument is kept alive between calls).
TEST(LinkedProgramTest, LentInputsAndRecycledSlots) {
  const Var x = dvector("x");
  const Var twice = x * x;                                                      // x read twice
  const Var neg = ApplyOp(Elemwise::Make(ScalarOpKind::kNeg, {{0, 0}}), {x});  // overwrites x
  const Var y = twice + neg + 1.0;
  auto p = LinkOf({x}, {y, twice});
  bool alias_seen = false;
  for (const Step& step : p->steps()) {
    if (step.inputs.size() == 2 && step.inputs[0] == step.inputs[1]) {
      EXPECT_EQ(step.lend, std::vector<int>{0});
      ASSERT_EQ(step.alias.size(), 1u);
      EXPECT_EQ(step.alias[0], (std::pair<int, int>{1, 0}));
      alias_seen = true;
    }
  }
  EXPECT_TRUE(alias_seen);
  const Tensor xv = *Tensor::Of<double>(DType::kFloat64, {3}, {1.0, 2.0, 3.0});
  for (int call = 0; call < 3; ++call) {
    std::vector<Tensor> slots = p->NewSlots();
    for (const auto& c : p->constants()) {
      bool held = false;  // every constant is in its slot, recycled set or not
      for (const Tensor& t : slots) held |= t.SharesBufferWith(c);
      EXPECT_TRUE(held) << "call " << call;
    }
    for (int s = 0; s < static_cast<int>(slots.size()); ++s) {
      bool constant = false;
      for (const auto& c : p->constants()) constant |= slots[s].SharesBufferWith(c);
      if (!constant) EXPECT_EQ(slots[s].raw_data(), nullptr) << "slot " << s << ", call " << call;
    }
    slots[0] = xv;
    CallContext ctx;
    ASSERT_TRUE(p->Run(slots, ctx).ok());
    EXPECT_EQ(slots[p->output_slots()[0]].ToString(), "[1. 3. 7.]");  // x*x - x + 1
    EXPECT_EQ(slots[p->output_slots()[1]].ToString(), "[1. 4. 9.]");
    EXPECT_EQ(slots[0].ToString(), "[1. 2. 3.]");  // lent and given back, never overwritten
    EXPECT_EQ(xv.ToString(), "[1. 2. 3.]");
    p->RecycleSlots(std::move(slots));
  }
}

}  // namespace
}  // namespace kiln
