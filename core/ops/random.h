// Aesara's RandomVariable ops (aesara.tensor.random.basic): normal_rv, uniform_rv, ... Each
// takes a generator state and gives the next state and a draw, so that a shared state updated by
// each call (RandomStream's default updates) never repeats a draw. The state is a uint64 vector
// [key, counter] for Philox (core/ops/philox.h); a call uses counters counter, counter + 1, ...
#ifndef KILN_CORE_OPS_RANDOM_H_
#define KILN_CORE_OPS_RANDOM_H_

#include <optional>
#include <string>
#include <vector>

#include "core/graph/op_decl.h"
#include "core/graph/var.h"

namespace kiln {

// Aesara's RandomVariable.__props__.
struct RandomVariableAttrs {
  std::string name;              // the distribution: "normal"
  int ndim_supp = 0;             // dims of one draw
  std::vector<int> ndims_params;  // dims of one draw's value of each parameter
  std::string dtype;             // as Aesara's class declares it: "floatX", "int64" or "None"
  bool inplace = false;
  static constexpr auto Fields() {
    return std::tuple{AttrField{"name", &RandomVariableAttrs::name},
                      AttrField{"ndim_supp", &RandomVariableAttrs::ndim_supp},
                      AttrField{"ndims_params", &RandomVariableAttrs::ndims_params},
                      AttrField{"dtype", &RandomVariableAttrs::dtype},
                      AttrField{"inplace", &RandomVariableAttrs::inplace}};
  }
  // A distribution Kiln samples, with its own ndim_supp, ndims_params and dtype.
  absl::Status Check() const;
};

// RandomVariable(rng, size, dtype, *params) -> (next rng, draw). size is an int64 vector (empty:
// the parameters' broadcast batch shape); dtype an int64 constant, the index of the draw's dtype
// in Aesara's all_dtypes. Printed as Aesara prints it: "normal_rv{0, (0, 0), floatX, False}".
class RandomVariable final : public DeclaredOp<RandomVariable, RandomVariableAttrs> {
 public:
  KILN_DECLARED_OP("RandomVariable")
  std::string Name() const override;
  std::vector<std::vector<bool>> ConnectionPattern(const Apply& node) const override;
};

// The type of a generator state: TensorType(uint64, (2,)).
TensorTypePtr RngStateType();
// A fresh state for `seed`: its key mixed from the seed (SplitMix64), counter 0.
Tensor RngState(uint64_t seed);

// The RandomVariable op of distribution `name` (RandomVariableAttrs::Check's table).
absl::StatusOr<OpPtr> RandomVariableOp(absl::string_view name);

// Aesara's op(*params, size=size, rng=rng): {next rng, draw}. An empty `size` draws the
// parameters' broadcast shape. `dtype` overrides floatX (float64 unless given).
absl::StatusOr<std::vector<Var>> random_variable(absl::string_view name, const Var& rng,
                                                 std::vector<Var> params,
                                                 std::vector<int64_t> size = {},
                                                 std::optional<DType> floatx = std::nullopt);

}  // namespace kiln

#endif  // KILN_CORE_OPS_RANDOM_H_
