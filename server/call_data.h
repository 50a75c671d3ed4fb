// Where an Execute's arguments come from and where its outputs go: the messages themselves,
// the session's shared-memory regions (shm_regions.h), or tensors resident by handle.
#ifndef KILN_SERVER_CALL_DATA_H_
#define KILN_SERVER_CALL_DATA_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/tensor/tensor.h"
#include "kiln/v1/service.pb.h"
#include "server/sessions.h"
#include "server/shm_regions.h"

namespace kiln::server {

// The stores a call's data may live in, and the call's limits.
struct CallStores {
  RegionRegistry& regions;
  SessionStore& sessions;
  std::string tenant;
  int64_t max_tensor_bytes;
};

// A resident tensor's value lives in a session of its own under this name.
inline constexpr char kResidentValue[] = "value";

// The call's arguments in order: req.args, with those named in req.arg_refs read from regions
// or resident tensors. INVALID_ARGUMENT names the argument; `message_bytes` counts the bytes
// that came in the message.
absl::StatusOr<std::vector<Tensor>> GatherArguments(const v1::ExecuteRequest& req,
                                                    const CallStores& stores,
                                                    int64_t* message_bytes);

// Bytes of arguments the call will read from regions.
uint64_t RegionBytes(const v1::ExecuteRequest& req);

// Where a call's outputs may go: bytes [begin, end) of a region, or nowhere (no region).
struct OutputSlice {
  std::shared_ptr<Region> region;
  uint64_t begin = 0, end = 0;
};

// The call's req.output_region, checked before the call runs: a bad one fails the call before
// any of its updates applies.
absl::StatusOr<OutputSlice> FindOutputSlice(const v1::ExecuteRequest& req,
                                            const CallStores& stores);

// Puts the outputs in resp: in the slice those that fit (output_offsets says where), the others
// in messages; RESOURCE_EXHAUSTED, before any copy, when those pass `max_message_bytes` (0: no
// limit). `message_bytes` counts the bytes put in messages.
absl::Status PutOutputs(const std::vector<Tensor>& outputs, const OutputSlice& slice,
                        int64_t max_message_bytes, v1::ExecuteResponse* resp,
                        int64_t* message_bytes);

}  // namespace kiln::server

#endif  // KILN_SERVER_CALL_DATA_H_
