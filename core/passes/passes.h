// Kiln's rewrite phases, as Aesara's FAST_RUN: merge, canonicalize (with constant folding),
// stabilize, specialize, elemwise fusion, in-place, and merge again.
#ifndef KILN_CORE_PASSES_PASSES_H_
#define KILN_CORE_PASSES_PASSES_H_

#include "absl/status/statusor.h"
#include "core/graph/fgraph.h"
#include "core/rewrite/rewriter.h"

namespace kiln {

// The database of every phase and rule.
const RewriteDB& DefaultRewriteDB();
// Adds a phase to DefaultRewriteDB from a library above the passes (Scan's); called by a static
// initializer, before the first optimize. Returns true.
bool RegisterExtraPhase(Phase phase);

// Rewrites fg in place (mode FAST_RUN, FAST_COMPILE or NONE; see RewriteOptions).
absl::StatusOr<RewriteReport> optimize(FunctionGraph& fg, const RewriteOptions& options = {});

// The phases, for tests and for building other databases.
// The whole-graph phases: each says whether it changed fg.
absl::StatusOr<bool> MergePass(FunctionGraph& fg, RewriteContext& ctx);
absl::StatusOr<bool> FusionPass(FunctionGraph& fg, RewriteContext& ctx);
absl::StatusOr<bool> InplacePass(FunctionGraph& fg, RewriteContext& ctx);
RewriteRule ConstantFoldingRule();
std::vector<RewriteRule> CanonicalizeRules();
// The mul/div canonizer (canonicalize, and stabilize again after the sigmoid rules).
RewriteRule MulDivCanonizerRule();
// (a / x - b) * x -> a - b * x (canonicalize and stabilize).
RewriteRule GreedyDistributorRule();
std::vector<RewriteRule> StabilizeRules();  // includes SigmoidRules() and LogErfRules()
// Sigmoid recognition in quotients and products of exponentials (stabilize).
std::vector<RewriteRule> SigmoidRules();
// log1p of negated sigmoids and exponentials, log of sums of exponentials, erf complements
// (stabilize).
std::vector<RewriteRule> LogErfRules();
// log(exp(a) - exp(b)) -> a + log1mexp(b - a) (specialize).
RewriteRule LogDiffExpRule();
std::vector<RewriteRule> SpecializeRules();
// abs lifted over products and sqrt(x**2) -> abs(x) ("canonicalize"); abs merged ("specialize").
std::vector<RewriteRule> AbsSqrtRules(const std::string& phase);
// Scalar factors and broadcast divisors taken out of sums and products (the phase's share).
std::vector<RewriteRule> SumProdRules(const std::string& phase);
// Reductions of reductions merged, reshapes of constant slices removed or made indexes, indexes
// of MakeVector and of fills taken (canonicalize).
std::vector<RewriteRule> ReshapeReduceRules();
// SpecifyShape of proven lengths lifted and removed (canonicalize and specialize); sums of
// MakeVector made sums of scalars (canonicalize); slices tiling a vector made one Split
// (specialize).
std::vector<RewriteRule> SplitShapeRules(const std::string& phase);

}  // namespace kiln

#endif  // KILN_CORE_PASSES_PASSES_H_
