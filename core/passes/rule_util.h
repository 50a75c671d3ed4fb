// Helpers for writing rewrite rules.
#ifndef KILN_CORE_PASSES_RULE_UTIL_H_
#define KILN_CORE_PASSES_RULE_UTIL_H_

#include <optional>
#include <vector>

#include "core/graph/fgraph.h"
#include "core/graph/var.h"
#include "core/ops/scalar_op.h"
#include "core/rewrite/pattern.h"
#include "core/rewrite/rewriter.h"

namespace kiln {

using Replacement = std::optional<std::vector<VariablePtr>>;

// `v` as the replacement of `out` (a tensor output of a node): cast to its dtype when it
// differs, given its static shape when v's is less specific; nullopt when v failed to build or
// its shape cannot stand for out's (a rule must not change a result's shape).
std::optional<VariablePtr> FitTo(const Var& v, const Variable& out);

// `v` as the replacement of node's single output (FitTo).
Replacement ReplaceWith(const Var& v, const Apply& node);

// ReplaceWith, and where v is smaller than the output (x / x -> 1) v filled to the shape of the
// node's inputs (Aesara's fill_chain): second(x, 1).
Replacement ReplaceFilled(const Var& v, const Apply& node);

// True when node's only use is another node of the tree `kinds` with its dtype: rules on whole
// trees (products, sums) act once at the root instead of on every subtree (which is quadratic).
bool InsideTree(const FunctionGraph& fg, const Apply& node,
                std::initializer_list<ScalarOpKind> kinds);

// A product flattened through mul and neg: its constant coefficient (fills of constants
// included) and its other factors in the order met.
struct FlatProduct {
  double coefficient = 1;
  std::vector<VariablePtr> factors;
};
// v as a FlatProduct, or nullopt past `budget` nodes: products may be shared, and a walk of a
// shared DAG as a tree can be exponential.
std::optional<FlatProduct> FlattenProduct(const VariablePtr& v, int budget);

// -v, without a double negation: u for v = neg(u).
Var Negate(const Var& v);

// True when every static dim of v is 1: v broadcasts as a scalar.
bool BroadcastsAsScalar(const Variable& v);

// A rule of the phase tagged `phase` looking at nodes of the `tracks` kinds.
RewriteRule PhaseRule(std::string name, std::string phase, std::vector<OpClassId> tracks,
                      std::function<Replacement(const FunctionGraph&, Apply&)> apply);
// A rule of the phase tagged `phase` looking at Elemwise nodes of the `scalar_ops` (every scalar
// op when empty): the scalar ops of the node itself for which `apply` can fire.
RewriteRule ElemwiseRule(std::string name, std::string phase, std::vector<ScalarOpKind> scalar_ops,
                         std::function<Replacement(const FunctionGraph&, Apply&)> apply);

// What a pattern rule's pattern binds, for its replacement: variables and a node (m::Op<T>).
struct Bindings {
  VariablePtr x, y;
  const Apply* node = nullptr;
};

// A rule as one row: a name, its phase, the pattern (built by `pattern` over the Bindings it fills)
// and the replacement of the node whose output the pattern matches (`replace` of the bindings;
// an invalid Var declines). The rule is indexed by the pattern's root, so it is offered only the
// nodes that root can match:
//   // --x -> x
//   PatternRule("local_neg_neg", "canonicalize",
//               [](Bindings& b) { return m::Neg(m::Neg(m::Any(&b.x))); },
//               [](const Bindings& b) { return Var(b.x); }),
// Rules that are not a pattern and a replacement stay functions (PhaseRule, ElemwiseRule).
template <typename MakePattern, typename Replace>
RewriteRule PatternRule(std::string name, std::string phase, MakePattern pattern,
                        Replace replace) {
  Bindings probe;
  PatternRoots roots;
  pattern(probe).AddRoots(roots);
  if (roots.any) roots = {};  // a root that can be any variable: offered every node
  return RewriteRule{std::move(name), {std::move(phase)}, std::move(roots.classes),
                     [pattern, replace](const FunctionGraph&, Apply& node) -> Replacement {
                       Bindings b;
                       if (node.num_outputs() != 1 || !pattern(b).Match(node.output(0))) {
                         return std::nullopt;
                       }
                       return ReplaceWith(replace(b), node);
                     },
                     std::move(roots.scalar_ops)};
}

}  // namespace kiln

#endif  // KILN_CORE_PASSES_RULE_UTIL_H_
