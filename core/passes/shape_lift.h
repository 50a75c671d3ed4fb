// Shape lifting (Aesara's ShapeFeature rewrites): the shape of a computed value from the shapes
// of its inputs, so that a graph asking only for shapes does not compute the values.
#ifndef KILN_CORE_PASSES_SHAPE_LIFT_H_
#define KILN_CORE_PASSES_SHAPE_LIFT_H_

#include <vector>

#include "core/rewrite/rewriter.h"

namespace kiln {

// The canonicalize rules local_shape_to_shape_i and local_shape_i_lift.
std::vector<RewriteRule> ShapeLiftRules();

}  // namespace kiln

#endif  // KILN_CORE_PASSES_SHAPE_LIFT_H_
