#include "core/passes/passes.h"

#include "core/passes/nnet_rules.h"

namespace kiln {

namespace {
std::vector<Phase>& ExtraPhases() {
  static auto* phases = new std::vector<Phase>();
  return *phases;
}
}  // namespace

bool RegisterExtraPhase(Phase phase) {
  ExtraPhases().push_back(std::move(phase));
  return true;
}

const RewriteDB& DefaultRewriteDB() {
  static const RewriteDB* db = [] {
    auto* d = new RewriteDB();
    for (const Phase& p : ExtraPhases()) d->Register(p);
    d->Register(Phase{"merge1", 0, {"fast_compile", "merge"}, {}, MergePass});
    // Aesara's batchnorm_opts: the abstract batch-normalization ops expanded first, so that
    // merge and canonicalize see the elementwise graphs (in FAST_COMPILE too, as Aesara).
    d->Register(Phase{"batchnorm_opts", -0.005, {"fast_compile", "fast_run", "batchnorm_opts"},
                      BatchNormRules("batchnorm_opts"), nullptr});
    d->Register(Phase{"canonicalize", 1, {"canonicalize"}, CanonicalizeRules(), nullptr});
    // Constant folding runs in every equilibrium phase: the rules of one phase make constant
    // subexpressions the next should not have to see.
    auto with_folding = [](std::vector<RewriteRule> rules) {
      rules.insert(rules.begin(), ConstantFoldingRule());
      return rules;
    };
    d->Register(Phase{"stabilize", 1.5, {"stabilize"}, with_folding(StabilizeRules()), nullptr});
    d->Register(Phase{"specialize", 2, {"specialize"}, with_folding(SpecializeRules()), nullptr});
    d->Register(Phase{"elemwise_fusion", 49, {"fusion"}, {}, FusionPass});
    // The second merge comes before in-place: merging a node destroyed by one client with
    // its twin used by another would let the first overwrite what the second reads.
    d->Register(Phase{"merge2", 60, {"fast_compile", "merge"}, {}, MergePass});
    d->Register(Phase{"inplace", 75, {"inplace"}, {}, InplacePass});
    return d;
  }();
  return *db;
}

absl::StatusOr<RewriteReport> optimize(FunctionGraph& fg, const RewriteOptions& options) {
  return RunPhases(fg, DefaultRewriteDB(), options);
}

}  // namespace kiln
