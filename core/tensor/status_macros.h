// RETURN_IF_ERROR and ASSIGN_OR_RETURN: the early returns of absl::Status code, written once.
//
//   RETURN_IF_ERROR(CheckShape(name, shape, dtype));
//   ASSIGN_OR_RETURN(const TensorType* t, TensorInput(*this, inputs, 0));
#ifndef KILN_CORE_TENSOR_STATUS_MACROS_H_
#define KILN_CORE_TENSOR_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Returns the status of `expr` (an absl::Status) from the enclosing function when it is not OK.
#define RETURN_IF_ERROR(expr)                                   \
  do {                                                          \
    if (::absl::Status kiln_status = (expr); !kiln_status.ok()) \
      return kiln_status;                                       \
  } while (false)

// Declares or assigns `lhs` from the value of `expr` (an absl::StatusOr), or returns its status
// from the enclosing function when it is not OK.
#define ASSIGN_OR_RETURN(lhs, expr) \
  KILN_ASSIGN_OR_RETURN_IMPL(KILN_STATUS_CONCAT(kiln_status_or_, __LINE__), lhs, expr)

#define KILN_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return std::move(tmp).status();   \
  lhs = *std::move(tmp)

#define KILN_STATUS_CONCAT(a, b) KILN_STATUS_CONCAT_INNER(a, b)
#define KILN_STATUS_CONCAT_INNER(a, b) a##b

#endif  // KILN_CORE_TENSOR_STATUS_MACROS_H_
