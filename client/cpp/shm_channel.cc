#include "client/cpp/shm_channel.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <random>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/tensor/status_macros.h"
#include "proto/convert/tensor_convert.h"

namespace kiln::client {
namespace {

constexpr uint64_t kAlign = 64;            // offsets of arguments and outputs
constexpr uint64_t kMinBytes = 1 << 20;    // the smallest region
constexpr uint64_t kMaxBytes = 1ull << 30;  // past this, calls use messages

uint64_t Aligned(uint64_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

std::string Mode() {
  const char* v = std::getenv("KILN_SHM");
  return v == nullptr || *v == '\0' ? "auto" : v;
}

// A fresh name the server accepts: "/kiln-" and 32 hex digits.
std::string RandomShmName() {
  std::random_device bits;
  std::string name = "/kiln-";
  for (int i = 0; i < 4; ++i) absl::StrAppend(&name, absl::Hex(bits(), absl::kZeroPad8));
  return name;
}

}  // namespace

bool OnThisHost(const std::string& address) {
  if (absl::StartsWith(address, "unix:")) return true;
  std::string host = address.substr(0, address.rfind(':'));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host == "localhost") return true;
  in_addr v4;
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6;
  return inet_pton(AF_INET6, host.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

ShmChannel::ShmChannel(const std::string& address)
    : enabled_(Mode() == "on" || (Mode() == "auto" && OnThisHost(address))),
      forced_(Mode() == "on") {
  if (const char* v = std::getenv("KILN_SHM_MIN_BYTES"); v != nullptr && *v != '\0') {
    min_bytes_ = std::strtoull(v, nullptr, 10);
  }
}

ShmChannel::~ShmChannel() { Forget(); }

void ShmChannel::Forget() {
  if (base_ != nullptr) munmap(base_, size_);
  base_ = nullptr;
  size_ = 0;
}

absl::StatusOr<bool> ShmChannel::Fill(const std::vector<Tensor>& args, uint64_t output_bytes,
                                      const Registrar& registrar, v1::ExecuteRequest& req) {
  if (!enabled_) return false;
  std::vector<uint64_t> offsets;
  uint64_t end = 0;
  for (const Tensor& t : args) {
    const uint64_t n = static_cast<uint64_t>(t.nbytes());
    offsets.push_back(n == 0 ? 0 : Aligned(end));
    end = std::max(end, offsets.back() + n);
  }
  const uint64_t need = Aligned(end) + output_bytes;
  if (need < min_bytes_) return false;
  if (base_ == nullptr || need > size_) {
    if (need > kMaxBytes) return false;
    const uint64_t size = std::max(kMinBytes, std::bit_ceil(need));
    const std::string name = RandomShmName();
    const int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return absl::InternalError(absl::StrCat("shm_open: ", std::strerror(errno)));
    void* mapped = MAP_FAILED;
    absl::Status s = ftruncate(fd, static_cast<off_t>(size)) == 0
                         ? registrar(name, size)
                         : absl::InternalError(absl::StrCat("ftruncate: ", std::strerror(errno)));
    if (s.ok()) mapped = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    shm_unlink(name.c_str());  // registered or not, the name goes: the server holds it open
    close(fd);
    if (!s.ok()) {
      if (forced_) return s;
      enabled_ = false;  // another host, a container, or --shm=false: messages from now on
      return false;
    }
    if (mapped == MAP_FAILED) return absl::InternalError(absl::StrCat("mmap: ", std::strerror(errno)));
    Forget();
    base_ = static_cast<char*>(mapped);
    size_ = size;
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const Tensor c = args[i].Contiguous();
    v1::ArgumentRef* ref = req.add_arg_refs();
    ref->set_index(static_cast<uint32_t>(i));
    ref->set_dtype(ToProto(c.dtype()));
    for (int64_t d : c.shape()) ref->add_shape(d);
    ref->mutable_region()->set_region(kRegion);
    ref->mutable_region()->set_offset(offsets[i]);
    ref->mutable_region()->set_size(static_cast<uint64_t>(c.nbytes()));
    if (c.nbytes() > 0) std::memcpy(base_ + offsets[i], c.raw_data(), c.nbytes());
  }
  req.mutable_output_region()->set_region(kRegion);
  req.mutable_output_region()->set_offset(Aligned(end));
  req.mutable_output_region()->set_size(size_ - Aligned(end));
  return true;
}

absl::StatusOr<std::vector<Tensor>> ShmChannel::Outputs(const v1::ExecuteResponse& resp) const {
  std::vector<Tensor> out;
  for (int i = 0; i < resp.outputs_size(); ++i) {
    const v1::Tensor& msg = resp.outputs(i);
    const int64_t at = i < resp.output_offsets_size() ? resp.output_offsets(i) : -1;
    if (at < 0) {
      ASSIGN_OR_RETURN(Tensor t, FromProto(msg));
      out.push_back(std::move(t));
      continue;
    }
    ASSIGN_OR_RETURN(DType dtype, FromProto(msg.dtype()));
    Shape shape(msg.shape().begin(), msg.shape().end());
    RETURN_IF_ERROR(CheckShape("output", shape, dtype));
    const uint64_t n = static_cast<uint64_t>(ShapeSize(shape) * DTypeSize(dtype));
    if (static_cast<uint64_t>(at) > size_ || n > size_ - at) {
      return absl::DataLossError(absl::StrCat("output ", i, " lies outside the region"));
    }
    Tensor t = Tensor::Empty(dtype, std::move(shape));
    if (n > 0) std::memcpy(t.raw_data(), base_ + at, n);
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace kiln::client
