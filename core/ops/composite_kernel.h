// The fused executor of Elemwise{Composite}: the scalar program runs over cache-sized blocks of
// the output, each instruction a vectorized loop (SLEEF for the transcendental functions) over
// block buffers, so no intermediate is ever materialised in memory; blocks are split across the
// cores.
#ifndef KILN_CORE_OPS_COMPOSITE_KERNEL_H_
#define KILN_CORE_OPS_COMPOSITE_KERNEL_H_

#include <memory>
#include <span>
#include <vector>

#include "core/ops/composite.h"
#include "core/tensor/tensor.h"

namespace kiln {

// Runs program over inputs broadcast to `shape` into outputs, and returns true; returns false
// (doing nothing) outside the fast path: every register float32 or every register float64; each
// input a single element, or of the output's rank (up to 8 dims) and gathered block by block
// when it is broadcast or strided (no output sharing its memory); and only ops the block
// executor has (arithmetic, maximum/minimum, abs, sqr, sqrt, comparisons, isnan/isinf, switch
// and SLEEF's functions).
// The program runs by its plan (ScalarProgram::plan; one made for the call when it has none).
bool RunFusedBlocks(const ScalarProgram& program, const Shape& shape,
                    std::span<const Tensor> inputs, std::vector<Tensor>& outputs);

// Elements past which RunSimpleElemwise leaves an op to Elemwise's kernels (which split it
// across cores).
inline constexpr int64_t kMaxSimpleElements = 4096;
// Inputs past which it does too (a sum of many terms): its scratch, the one-element inputs each
// filled to the output's size, stays within 256 KiB.
inline constexpr size_t kMaxSimpleInputs = 8;

// One arithmetic op (add, sub, mul, true_div, neg, sqr, sqrt, abs, maximum, minimum,
// reciprocal, identity, second: the ones whose results are exact IEEE operations) giving
// `dtype` (float32 or float64), over inputs each contiguous of `shape` and `dtype`, or a single
// float32 or float64 element (converted as AsType does: Aesara makes 0.5 a float32 constant),
// up to kMaxSimpleElements and kMaxSimpleInputs: computed by the block executor's loops
// straight into `out` (reused when it already has the shape and dtype: an in-place output),
// without the general kernel's dispatch. Returns false (doing nothing) for any other op or
// input. Small nodes' fast path.
bool RunSimpleElemwise(ScalarOpKind kind, DType dtype, const Shape& shape,
                       std::span<const Tensor> inputs, Tensor& out);

// The part of RunFusedBlocks' work that depends on the program alone (its compute dtype, whether
// the block executor has every instruction, the outputs' dtypes, when each register's block
// buffer is free), done once per program rather than per call.
std::shared_ptr<const FusedPlan> PlanFusedBlocks(const ScalarProgram& program);

}  // namespace kiln

#endif  // KILN_CORE_OPS_COMPOSITE_KERNEL_H_
