// Everything a user of the C++ DSL needs: types and constructors, the ops, function and printing.
// Library code includes the narrower headers instead.
#ifndef KILN_CORE_KILN_H_
#define KILN_CORE_KILN_H_

#include "core/graph/basic.h"
#include "core/graph/constructors.h"
#include "core/graph/fgraph.h"
#include "core/graph/op.h"
#include "core/graph/traversal.h"
#include "core/grad/gradient.h"
#include "core/grad/vectorize.h"
#include "core/ops/gradient_ops.h"
#include "core/grad/verify_grad.h"
#include "core/graph/gradient_types.h"
#include "core/graph/var.h"
#include "core/ops/alloc.h"
#include "core/ops/composite.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/elemwise.h"
#include "core/ops/indexing.h"
#include "core/ops/linalg.h"
#include "core/ops/math.h"
#include "core/ops/nnet.h"
#include "core/ops/nonzero.h"
#include "core/ops/reduce.h"
#include "core/ops/repeat.h"
#include "core/ops/shape.h"
#include "core/ops/shape_infer.h"
#include "core/passes/passes.h"
#include "core/rewrite/pattern.h"
#include "core/rewrite/rewriter.h"
#include "core/runtime/function.h"
#include "core/runtime/shared.h"
#include "core/runtime/tensor.h"
#include "core/text/dot.h"
#include "core/text/dprint.h"

#endif  // KILN_CORE_KILN_H_
