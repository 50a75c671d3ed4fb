// The C++ client's same-host shared memory: when the server's address is a loopback one, a
// call's arguments are written into a POSIX shared-memory region registered with the session,
// and its outputs are read back from it, instead of travelling in messages. The region's name
// is unlinked once the server has opened it, so nothing is left behind if the process dies.
#ifndef KILN_CLIENT_CPP_SHM_CHANNEL_H_
#define KILN_CLIENT_CPP_SHM_CHANNEL_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/tensor/tensor.h"
#include "kiln/v1/service.pb.h"

namespace kiln::client {

// True for a loopback host:port ("localhost", 127.0.0.0/8, [::1]) or a unix: address.
bool OnThisHost(const std::string& address);

class ShmChannel {
 public:
  // The region's name in the session.
  static constexpr char kRegion[] = "cpp";
  // Registers shm_name, of `bytes`, as kRegion with the session.
  using Registrar = std::function<absl::Status(const std::string& shm_name, uint64_t bytes)>;

  // On for a loopback address unless KILN_SHM=off; KILN_SHM=on: for any address.
  explicit ShmChannel(const std::string& address);
  ~ShmChannel();
  ShmChannel(const ShmChannel&) = delete;
  ShmChannel& operator=(const ShmChannel&) = delete;

  bool enabled() const { return enabled_; }
  // Writes args into the region and names them in req (arg_refs), with `output_bytes` of room
  // for the outputs after them (output_region), registering a larger region first if needed.
  // False, req untouched, for a call of fewer bytes than KILN_SHM_MIN_BYTES (32 KiB), or when
  // no region can be had: the channel is then off (an error instead with KILN_SHM=on).
  absl::StatusOr<bool> Fill(const std::vector<Tensor>& args, uint64_t output_bytes,
                            const Registrar& registrar, v1::ExecuteRequest& req);
  // The outputs of a response to a request Fill prepared, copied out of the region.
  absl::StatusOr<std::vector<Tensor>> Outputs(const v1::ExecuteResponse& resp) const;
  // Drops the region (the server lost it); the next Fill registers a new one.
  void Forget();

 private:
  bool enabled_;
  bool forced_;  // KILN_SHM=on
  // Calls moving fewer bytes go in messages, cheaper for them (KILN_SHM_MIN_BYTES).
  uint64_t min_bytes_ = 32768;
  char* base_ = nullptr;
  uint64_t size_ = 0;
};

}  // namespace kiln::client

#endif  // KILN_CLIENT_CPP_SHM_CHANNEL_H_
