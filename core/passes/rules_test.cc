// Every registered rewrite rule on its own: run alone (mode NONE with the rule included by name)
// on a graph it matches, it fires and the graph keeps its values; switched off by name in
// FAST_RUN it never fires; and the engine offers an Elemwise node only the rules tracking its
// scalar op.
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/kiln.h"
#include "core/ops/advanced_indexing.h"
#include "core/ops/blockwise.h"
#include "core/ops/batchnorm.h"
#include "core/ops/nlinalg.h"
#include "core/ops/nnet_xent.h"
#include "core/ops/slinalg.h"
#include "core/ops/diagonal.h"
#include "core/passes/passes.h"
#include "gtest/gtest.h"
#include "tests/testing/rewrite_check.h"

namespace kiln {
namespace {

struct Example {
  std::vector<Var> inputs, outputs;
};

// A graph each rule matches as the constructors build it (inputs named p... are positive).
const std::map<std::string, std::function<Example()>>& Examples() {
  static const auto* examples = new std::map<std::string, std::function<Example()>>{
      {"constant_folding",
       [] {
         Var x = dmatrix("px");
         return Example{{x}, {x + constant(2.0) * constant(3.0)}};
       }},
      {"local_1msigmoid",
       [] {
         Var x = dmatrix("px");
         return Example{{x}, {1.0 - sigmoid(x)}};
       }},
      {"local_abs_lift",
       [] {
         Var x = dmatrix("px"), y = dmatrix("py");
         return Example{{x, y}, {abs(x * y)}};
       }},
      {"local_abs_merge",
       [] {
         Var x = dmatrix("px"), y = dmatrix("py");
         return Example{{x, y}, {abs(x) * abs(y)}};
       }},
      {"local_AdvancedIncSubtensor_to_AdvancedIncSubtensor1",
       [] {
         Var x = dmatrix("px"), y = dvector("py");
         Var i = constant(*Tensor::FromValues<int64_t>(DType::kInt64, {3},
                                                       std::vector<int64_t>{0, -1, 0}));
         return Example{{x, y}, {advanced_inc_subtensor(x, y, {AdvIndex::FullSlice(), i})}};
       }},
      {"local_abstract_batch_norm_inference",
       [] {
         Var x = dmatrix("px"), p = tensor(DType::kFloat64, {1, std::nullopt}, "pp");
         return Example{{x, p}, {abstract_batch_norm_inference(x, p, p, p, p, constant(1e-3),
                                                               {0})}};
       }},
      {"local_abstract_batch_norm_train",
       [] {
         Var x = dmatrix("px"), p = tensor(DType::kFloat64, {1, std::nullopt}, "pp");
         std::vector<Var> o = abstract_batch_norm_train(x, p, p, constant(1e-3), constant(0.1),
                                                        p, p, {0});
         return Example{{x, p}, o};
       }},
      {"local_abstract_batch_norm_train_grad",
       [] {
         Var x = dmatrix("px"), y = dmatrix("py");
         Var p = tensor(DType::kFloat64, {1, std::nullopt}, "pp");
         return Example{{x, y, p}, abstract_batch_norm_train_grad(x, y, p, p, p, constant(1e-3),
                                                                  {0})};
       }},
      {"local_add_canonizer",
       [] {
         Var x = dmatrix("px"), y = dmatrix("py");
         return Example{{x, y}, {x + y - y}};
       }},
      {"local_add_to_gemm",
       [] {
         Var x = dmatrix("px"), y = dmatrix("py"), z = dmatrix("pz");
         return Example{{x, y, z}, {z + dot22(x, y)}};
       }},
      {"local_cast_cast",
       [] {
         Var fx = fmatrix("pfx");
         return Example{{fx}, {cast(cast(fx, DType::kFloat64), DType::kFloat32)}};
       }},
      {"local_dimshuffle_lift",
       [] {
         Var x = dmatrix("px");
         return Example{{x}, {transpose(exp(x))}};
       }},
      {"local_dimshuffle_merge",
       [] {
         Var x = dmatrix("px");
         return Example{{x}, {dimshuffle(dimshuffle(x, {1, 0}), {1, 0})}};
       }},
      {"local_dot_to_dot22",
       [] {
         Var x = dmatrix("px"), y = dmatrix("py");
         return Example{{x, y}, {dot(x, y)}};
       }},
      {"local_erf_complements",
       [] {
         Var x = dmatrix("px");
         return Example{{x}, {1.0 - erf(x)}};
       }},
      {"local_exp_log",
       [] {
         Var x = dmatrix("px");
         return Example{{x}, {log(exp(x))}};
       }},
      {"local_exp_over_1_plus_exp",
       [] {
         Var s = dscalar("ps");
         return Example{{s}, {exp(s) / (1.0 + exp(s))}};
       }},
      {"local_exp_over_sum_of_exps",
       [] {
         Var x = dmatrix("px"), y = dmatrix("py");
         return Example{{x, y}, {exp(x) / (exp(x) + exp(y))}};
       }},
      {"local_expm1",
       [] {
         Var x = dmatrix("px");
         return Example{{x}, {exp(x) - 1.0}};
       }},
      {"local_fill_sink",
       [] {
         Var x = dmatrix("px"), y = dmatrix("py");
         return Example{{x, y}, {ones_like(x) * y}};
       }},
      {"local_grad_log_erfc_neg",
       [] {
         Var x = dmatrix("px");
         return Example{{x}, {exp(-sqr(x)) / erfc(x)}};
       }},
      {"local_greedy_distributor",
       [] {
         Var x = dmatrix("px"), y = dmatrix("py"), z = dmatrix("pz");
         return Example{{x, y, z}, {(y / x - z) * x}};
       }},
      {"local_log1mexp",
       [] {
         Var x = dmatrix("px");
         return Example{{x}, {log(-expm1(-x))}};
       }},
      {"local_log1p",
       [] {
         Var x = dmatrix("px");
         return Example{{x}, {log(1.0 + x)}};
       }},
      {"local_log1p_neg",
       [] {
         Var x = dmatrix("px");
         return Example{{x}, {log1p(-sigmoid(x))}};
       }},
      {"local_log_add_exp",
       [] {
         Var x = dmatrix("px"), y = dmatrix("py");
         return Example{{x, y}, {log(exp(x) + exp(y))}};
       }},
      {"local_log_erfc",
       [] {
         Var x = dmatrix("px");
         return Example{{x}, {log(erfc(x))}};
       }},
      {"local_log_sum_exp",
       [] {
         Var x = dmatrix("px");
         return Example{{x}, {log(sum(exp(x), 1))}};
       }},
      // (nnet_rules.cc: the labels a constant, valid for the 3 x 3 inputs.)
      {"crossentropy_to_crossentropy_with_softmax",
       [] {
         Var x = dmatrix("px");
         Var y = constant(*Tensor::Of<int64_t>(DType::kInt64, {3}, {0, 2, 1}));
         return Example{{x}, {crossentropy_categorical_1hot(softmax(x), y)}};
       }},
      {"graph_merge_softmax_with_crossentropy_softmax",
       [] {
         Var x = dmatrix("px"), b = dvector("pb");
         Var y = constant(*Tensor::Of<int64_t>(DType::kInt64, {3}, {0, 2, 1}));
         return Example{{x, b},
                        {softmax_with_bias(x, b),
                         crossentropy_softmax_argmax_1hot_with_bias(x, b, y)[0]}};
       }},
      {"local_argmax_pushdown",
       [] {
         Var x = dmatrix("px");
         return Example{{x}, {cast(argmax(softmax(x), 1), DType::kFloat64)}};
       }},
      {"local_advanced_indexing_crossentropy_onehot",
       [] {
         Var x = dmatrix("px");
         Var y = constant(*Tensor::Of<int64_t>(DType::kInt64, {3}, {0, 2, 1}));
         return Example{{x}, {advanced_subtensor(log(softmax(x)), {arange(shape_i(y, 0)), y})}};
       }},
      {"local_advanced_indexing_crossentropy_onehot_grad",
       [] {
         Var x = dmatrix("px"), g = dvector("pg");
         Var y = constant(*Tensor::Of<int64_t>(DType::kInt64, {3}, {0, 2, 1}));
         Var t = advanced_inc_subtensor(zeros_like(x), g, {arange(shape_i(y, 0)), y});
         return Example{{x, g}, {t - sum(t, Axes(1), true) * softmax(x)}};
       }},
      {"local_useless_maximum",
       [] {
         Var x = dmatrix("px");
         return Example{{x}, {maximum(exp(x), exp(x))}};
       }},
      {"local_neg_div_neg",
       [] {
         Var x = dmatrix("px"), y = dmatrix("py");
         return Example{{x, y}, {-((-x) / y)}};
       }},
      {"local_useless_crossentropy_softmax_1hot_with_bias_dx_alloc",
       [] {
         Var x = dmatrix("px"), b = dvector("pb"), g = dvector("pg");
         Var y = constant(*Tensor::Of<int64_t>(DType::kInt64, {3}, {0, 2, 1}));
         std::vector<Var> xent = crossentropy_softmax_argmax_1hot_with_bias(x, b, y);
         Var dy = second(xent[0], dimshuffle(sum(g), {kX}));
         return Example{{x, b, g}, {crossentropy_softmax_1hot_with_bias_dx(dy, xent[1], y)}};
       }},
      {"local_softmax_grad_to_crossentropy_with_softmax_grad",
       [] {
         Var x = dmatrix("px"), g = dvector("pg");
         Var y = constant(*Tensor::Of<int64_t>(DType::kInt64, {3}, {0, 2, 1}));
         Var sm = softmax(x);
         Var dsm = crossentropy_categorical_1hot_grad(g, sm, y);
         return Example{{x, g}, {(dsm - sum(dsm * sm, Axes(1), true)) * sm}};
       }},
      {"local_softmax_with_bias",
       [] {
         Var x = dmatrix("px"), b = dvector("pb");
         return Example{{x, b}, {softmax(x + b)}};
       }},
      {"local_logsoftmax",
       [] {
         Var x = dmatrix("px");
         return Example{{x}, {log(softmax(x))}};
       }},
      {"local_max_and_argmax",
       [] {
         Var x = dmatrix("px");
         return Example{{x}, {max(x, 1), cast(argmax(x, 1), DType::kFloat64)}};
       }},
      {"local_mul_canonizer",
       [] {
         Var x = dmatrix("px"), y = dmatrix("py");
         return Example{{x, y}, {x * y / y}};
       }},
      {"local_mul_specialize",
       [] {
         Var s = dscalar("ps");
         return Example{{s}, {-1.0 * s}};
       }},
      {"local_mul_zero",
       [] {
         Var x = dmatrix("px");
         return Example{{x}, {x * 0.0}};
       }},
      {"local_neg_neg",
       [] {
         Var x = dmatrix("px");
         return Example{{x}, {-(-x)}};
       }},
      {"local_neutral_operand",
       [] {
         Var x = dmatrix("px");
         return Example{{x}, {x * 1.0}};
       }},
      {"local_one_minus_exp",
       [] {
         Var x = dmatrix("px");
         return Example{{x}, {1.0 - exp(x)}};
       }},
      {"local_pow_specialize",
       [] {
         Var x = dmatrix("px");
         return Example{{x}, {pow(x, 2)}};
       }},
      {"local_reciprocal_1_plus_exp",
       [] {
         Var s = dscalar("ps");
         return Example{{s}, {reciprocal(1.0 + exp(s))}};
       }},
      {"local_replace_AdvancedSubtensor",
       [] {
         Var x = dtensor3("px");
         Var i = constant(*Tensor::FromValues<int64_t>(DType::kInt64, {2, 2},
                                                       std::vector<int64_t>{1, 0, -1, 1}));
         return Example{{x}, {advanced_subtensor(x, {AdvIndex::FullSlice(), i})}};
       }},
      {"local_reshape_chain",
       [] {
         Var x = tensor(DType::kFloat64, {2, 3}, "px");
         return Example{{x},
                        {reshape(reshape(x, std::vector<int64_t>{6}), std::vector<int64_t>{3, 2})}};
       }},
      {"local_shape_to_constant",
       [] {
         Var t = tensor(DType::kFloat64, {2, kUnknownDim}, "pt");
         return Example{{t}, {cast(shape_i(t, 0), DType::kFloat64) * t}};
       }},
      {"cond_remove_constant",
       [] {
         Var x = dmatrix("px");
         return Example{{x}, {ifelse(constant(1.0), exp(x), sin(x))}};
       }},
      {"cond_merge_identical",
       [] {
         Var x = dmatrix("px"), c = dscalar("pc"), e = exp(x);
         return Example{{x, c}, {ifelse(c, e, e) * x}};
       }},
      {"cond_merge_ifs",
       [] {
         Var x = dmatrix("px"), y = dmatrix("py"), c = dscalar("pc");
         return Example{{x, y, c}, {ifelse(c, ifelse(c, exp(x), y), sin(y))}};
       }},
      {"ifelse_lift_single_if_through_acceptable_ops",
       [] {
         Var x = dmatrix("px"), y = dmatrix("py"), c = dscalar("pc");
         return Example{{x, y, c}, {exp(ifelse(c, x, y)) * 2.0}};
       }},
      {"local_shape_to_shape_i",
       [] {
         Var x = dmatrix("px");
         return Example{{x}, {shape(exp(x))}};
       }},
      {"local_shape_i_lift",
       [] {
         Var x = dmatrix("px"), y = dmatrix("py");
         return Example{{x, y}, {cast(shape_i(concatenate({x, y}, 0), 0), DType::kFloat64) * x}};
       }},
      {"local_sigm_times_exp",
       [] {
         Var x = dmatrix("px");
         return Example{{x}, {exp(x) * sigmoid(-x)}};
       }},
      {"local_sigmoid_complement_factor",
       [] {
         Var x = dmatrix("px"), y = dmatrix("py");
         return Example{{x, y}, {y - y * sigmoid(x)}};
       }},
      {"local_sqrt_sqr",
       [] {
         Var x = dmatrix("px");
         return Example{{x}, {sqrt(sqr(x))}};
       }},
      {"local_op_of_op",
       [] {
         Var x = tensor(DType::kFloat64, {std::nullopt, std::nullopt, std::nullopt}, "px");
         return Example{{x}, {sum(sum(x, 1), 1)}};
       }},
      {"local_reshape_unit_slice_to_index",
       [] {
         Var t = tensor(DType::kFloat64, {7}, "pt");
         return Example{{t}, {reshape(subtensor(t, {Slice{3, 4, std::nullopt}}),
                                      std::vector<int64_t>{})}};
       }},
      {"local_useless_flatten",
       [] {
         Var v = dvector("pv"), s = dscalar("ps");
         const std::vector<int64_t> flat = {-1};
         return Example{{v, s}, {reshape(v, flat) + reshape(s, flat)}};
       }},
      {"local_useless_reshape_of_slice",
       [] {
         Var t = tensor(DType::kFloat64, {7}, "pt");
         return Example{{t}, {reshape(subtensor(t, {Slice{-5, 6, std::nullopt}}),
                                      std::vector<int64_t>{4})}};
       }},
      {"local_sum_of_fill",
       [] {
         Var x = dmatrix("px");
         return Example{{x}, {sum(second(x, constant(2.0)))}};
       }},
      {"local_subtensor_make_vector",
       [] {
         Var a = dscalar("pa"), b = dscalar("pb");
         const Var ab = make_vector({a, b}, DType::kFloat64);
         return Example{{a, b}, {subtensor(ab, {Index(-1)}) * 2.0}};
       }},
      {"local_subtensor_of_fill",
       [] {
         Var v = dvector("pv");
         return Example{{v}, {subtensor(second(v, constant(3.0)), {Index(1)}) + v}};
       }},
      {"local_subtensor_slices_to_split",
       [] {
         Var t = tensor(DType::kFloat64, {7}, "pt");
         Var x = exp(t);
         return Example{{t}, {subtensor(x, {Slice{0, 3, std::nullopt}}) * 2.0,
                              subtensor(x, {Slice{3, std::nullopt, std::nullopt}}) * 3.0}};
       }},
      {"local_sum_make_vector",
       [] {
         Var a = dscalar("pa"), b = dscalar("pb");
         return Example{{a, b}, {sum(make_vector({a, exp(b)}, DType::kFloat64))}};
       }},
      {"local_specify_shape_lift",
       [] {
         Var t = tensor(DType::kFloat64, {7}, "pt");
         return Example{{t}, {specify_shape(exp(subtensor(t, {Slice{1, 4, std::nullopt}})), {3}) *
                              2.0}};
       }},
      {"local_useless_specify_shape",
       [] {
         Var t = tensor(DType::kFloat64, {7}, "pt");
         return Example{{t}, {exp(specify_shape(subtensor(t, {Slice{1, 4, std::nullopt}}), {3})) *
                              2.0}};
       }},
      {"local_sub_neg_to_add",
       [] {
         Var x = dmatrix("px"), y = dmatrix("py");
         return Example{{x, y}, {x - (-y)}};
       }},
      {"local_sum_prod_div_dimshuffle",
       [] {
         Var x = dmatrix("px");
         Var v = dvector("pv");
         return Example{{x, v}, {sum(x / dimshuffle(v, {0, kX}), 1)}};
       }},
      {"local_sum_prod_mul_by_scalar",
       [] {
         Var x = dmatrix("px");
         Var s = dscalar("ps");
         return Example{{x, s}, {sum(x * s)}};
       }},
      {"local_useless_alloc",
       [] {
         Var x = dmatrix("px");
         return Example{{x}, {alloc(x, {shape_i(x, 0), shape_i(x, 1)})}};
       }},
      {"local_useless_dimshuffle",
       [] {
         Var x = dmatrix("px");
         return Example{{x}, {dimshuffle(x, {0, 1})}};
       }},
      {"local_useless_elemwise",
       [] {
         Var x = dmatrix("px");
         return Example{{x}, {identity(x)}};
       }},
      {"local_useless_reduce",
       [] {
         Var x = dmatrix("px");
         return Example{{x}, {sum(x, std::vector<int>{})}};
       }},
      {"local_useless_unbatched_blockwise",
       [] {
         Var x = dmatrix("px"), y = dmatrix("py");
         return Example{{x, y},
                        {blockwise(std::make_shared<Dot>(), "(m,n),(n,k)->(m,k)", {x, y})}};
       }},
      {"local_useless_reshape",
       [] {
         Var x = tensor(DType::kFloat64, {2, 3}, "px");
         return Example{{x}, {reshape(x, std::vector<int64_t>{2, 3})}};
       }},
      {"local_useless_subtensor",
       [] {
         Var x = dmatrix("px");
         return Example{{x}, {subtensor(x, {Slice{}, Slice{}})}};
       }},
      {"local_useless_switch",
       [] {
         Var x = dmatrix("px"), y = dmatrix("py");
         return Example{{x, y}, {switch_(constant(true), x, y)}};
       }},
      {"log_diff_exp",
       [] {
         Var x = dmatrix("px"), y = dmatrix("py");
         return Example{{x, y}, {log(exp(x) - exp(x - y))}};
       }},
      {"logsigm_to_softplus",
       [] {
         Var x = dmatrix("px");
         return Example{{x}, {log(sigmoid(x))}};
       }},
      // The linear-algebra rules (linalg_rules.cc), on well-conditioned matrices.
      {"rewrite_inv_inv",
       [] {
         Var x = dmatrix("px");
         return Example{{x}, {matrix_inverse(matrix_inverse(x + eye(3) * constant(8.0)))}};
       }},
      {"rewrite_inv_eye_to_eye",
       [] {
         Var x = dmatrix("px");
         return Example{{x}, {x + matrix_inverse(eye(3))}};
       }},
      {"rewrite_det_diag_to_prod_diag",
       [] {
         Var v = dvector("pv");
         return Example{{v}, {det(diag(v))}};
       }},
      {"rewrite_remove_useless_cholesky",
       [] {
         Var x = dmatrix("px");
         return Example{{x}, {x + cholesky(eye(3))}};
       }},
      {"generic_solve_to_solve_triangular",
       [] {
         Var x = dmatrix("px"), b = dmatrix("pb");
         return Example{{x, b},
                        {solve(cholesky(dot(x, transpose(x)) + eye(3) * constant(3.0)), b)}};
       }},
      {"inv_as_solve",
       [] {
         Var x = dmatrix("px"), b = dmatrix("pb");
         return Example{{x, b}, {dot(matrix_inverse(x + eye(3) * constant(8.0)), b)}};
       }},
      {"local_solve_of_inv",
       [] {
         Var x = dmatrix("px"), b = dmatrix("pb");
         return Example{{x, b}, {solve(matrix_inverse(x + eye(3) * constant(8.0)), b)}};
       }},
      {"local_triangular_solves_to_cho_solve",
       [] {
         Var x = dmatrix("px"), b = dmatrix("pb");
         Var l = cholesky(dot(x, transpose(x)) + eye(3) * constant(3.0));
         Var y = solve_triangular(l, b, 0, true);
         return Example{{x, b}, {solve_triangular(transpose(l), y, 0, false)}};
       }},
      {"local_det_chol",
       [] {
         Var x = dmatrix("px");
         Var a = dot(x, transpose(x)) + eye(3) * constant(3.0);
         return Example{{x}, {det(a), cholesky(a)}};
       }},
      {"slogdet_specialization",
       [] {
         Var x = dmatrix("px");
         return Example{{x}, {log(det(dot(x, transpose(x)) + eye(3) * constant(3.0)))}};
       }},
  };
  return *examples;
}

std::set<std::string> RegisteredRules() {
  std::set<std::string> names;
  for (const Phase& phase : DefaultRewriteDB().phases()) {
    for (const RewriteRule& rule : phase.rules) names.insert(rule.name);
  }
  return names;
}

TEST(RulesTest, EveryRegisteredRuleHasAnExample) {
  const std::set<std::string> registered = RegisteredRules();
  EXPECT_GE(registered.size(), 50u);
  for (const std::string& name : registered) EXPECT_EQ(Examples().count(name), 1u) << name;
  for (const auto& [name, make] : Examples()) EXPECT_EQ(registered.count(name), 1u) << name;
}

TEST(RulesTest, EveryRuleAloneFiresAndKeepsTheValues) {
  for (const auto& [name, make] : Examples()) {
    SCOPED_TRACE(name);
    const Example e = make();
    RewriteOptions alone;
    alone.mode = OptimizerMode::kNone;
    alone.include = {name};
    testing::Optimized o = testing::Optimize(e.inputs, e.outputs, alone);
    ASSERT_NE(o.fg, nullptr);
    EXPECT_GT(o.report.rules[name].count, 0);
    for (const auto& [rule, stats] : o.report.rules) {
      if (rule != name) {
        EXPECT_EQ(stats.tried, 0) << rule << " ran beside " << name;
      }
    }
    testing::ExpectSameValues(name, e.inputs, e.outputs, *o.fg);
  }
}

TEST(RulesTest, EveryRuleSwitchedOffByNameNeverFires) {
  for (const auto& [name, make] : Examples()) {
    const Example e = make();
    RewriteOptions off;
    off.exclude = {name};
    testing::Optimized o = testing::Optimize(e.inputs, e.outputs, off);
    ASSERT_NE(o.fg, nullptr) << name;
    EXPECT_EQ(o.report.rules[name].tried, 0) << name;
    testing::ExpectSameValues(name, e.inputs, e.outputs, *o.fg);
  }
}

// exp(x) is offered the rules tracking exp or every node, none of the others.
TEST(RulesTest, AnElemwiseNodeIsOfferedOnlyTheRulesTrackingItsScalarOp) {
  Var x = dmatrix("px");
  RewriteOptions options;
  options.mode = OptimizerMode::kNone;
  options.include = {"canonicalize", "stabilize"};
  testing::Optimized o = testing::Optimize({x}, {exp(x)}, options);
  ASSERT_NE(o.fg, nullptr);
  for (const std::string rule : {"local_log1p", "logsigm_to_softplus", "local_log_sum_exp",
                                 "local_exp_over_1_plus_exp", "local_mul_canonizer"}) {
    EXPECT_EQ(o.report.rules[rule].tried, 0) << rule;
  }
  EXPECT_EQ(o.report.rules["local_exp_log"].tried, 1);
  EXPECT_GE(o.report.rules["constant_folding"].tried, 1);  // tracks every node
}

// A rule written as a pattern row is offered only the nodes its pattern's root can match (here
// log for local_logsoftmax, IfElse for the cond_ rules), and the driver times nothing unless
// profiling.
TEST(RulesTest, PatternAndIfElseRulesAreOfferedOnlyTheirRootsNodes) {
  Var x = dvector("px"), c = dscalar("pc");
  const Var out = log(softmax(x)) + ifelse(c, exp(x), sin(x)) * tanh(x);
  RewriteOptions options;
  options.mode = OptimizerMode::kNone;  // these rules alone
  options.include = {"local_logsoftmax", "cond_remove_constant", "cond_merge_identical",
                     "cond_merge_ifs"};
  for (const bool profile : {false, true}) {
    options.profile = profile;
    testing::Optimized o = testing::Optimize({x, c}, {out}, options);
    ASSERT_NE(o.fg, nullptr);
    EXPECT_EQ(o.report.rules["local_logsoftmax"].tried, 1);  // the one log, not exp, sin, tanh
    EXPECT_EQ(o.report.rules["local_logsoftmax"].count, 1);
    for (const char* rule : {"cond_remove_constant", "cond_merge_identical", "cond_merge_ifs"}) {
      EXPECT_EQ(o.report.rules[rule].tried, 1) << rule;  // the one IfElse
    }
    EXPECT_EQ(o.report.seconds > 0, profile);
    EXPECT_EQ(o.report.phase_seconds.empty(), !profile);
  }
}

}  // namespace
}  // namespace kiln
