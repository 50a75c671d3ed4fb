#include "server/call_data.h"

#include <map>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/tensor/status_macros.h"
#include "proto/convert/tensor_convert.h"

namespace kiln::server {
namespace {

// Outputs written to a region start at multiples of this.
constexpr uint64_t kOutputAlignment = 64;

absl::StatusOr<std::shared_ptr<Region>> FindRegion(const v1::ExecuteRequest& req,
                                                   const CallStores& stores,
                                                   const std::string& region) {
  if (req.session().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("region '", region.substr(0, 256), "': name the session that registered it"));
  }
  return stores.regions.Find(SessionKey(stores.tenant, req.session()), region);
}

// A region argument's bytes, read out of the region into memory of the call's own.
absl::StatusOr<Tensor> ReadRegionArgument(const v1::ExecuteRequest& req, const v1::ArgumentRef& ref,
                                          const CallStores& stores, const std::string& what) {
  ASSIGN_OR_RETURN(DType dtype, FromProto(ref.dtype()));
  Shape shape(ref.shape().begin(), ref.shape().end());
  RETURN_IF_ERROR(CheckShape(what, shape, dtype));
  const int64_t nbytes = ShapeSize(shape) * DTypeSize(dtype);
  if (nbytes > stores.max_tensor_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(what, " has ", nbytes,
                                                     " bytes, more than this server's limit of ",
                                                     stores.max_tensor_bytes));
  }
  const v1::RegionSlice& slice = ref.region();
  if (slice.size() != static_cast<uint64_t>(nbytes)) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": ", DTypeName(dtype), " of shape ",
                                                   ShapeToString(shape), " has ", nbytes,
                                                   " bytes, but its slice has ", slice.size()));
  }
  ASSIGN_OR_RETURN(std::shared_ptr<Region> region, FindRegion(req, stores, slice.region()));
  RETURN_IF_ERROR(region->CheckSlice(what.c_str(), slice.offset(), slice.size()));
  Tensor t = Tensor::Empty(dtype, std::move(shape));
  RETURN_IF_ERROR(region->Read(slice.offset(), slice.size(), t.raw_data()));
  if (dtype == DType::kBool) {
    RETURN_IF_ERROR(CheckBoolBytes(what, std::string_view(static_cast<const char*>(t.raw_data()),
                                                          static_cast<size_t>(nbytes))));
  }
  return t;
}

absl::StatusOr<Tensor> ReadResident(const std::string& handle, const CallStores& stores,
                                    const std::string& what) {
  absl::StatusOr<std::shared_ptr<Session>> s =
      stores.sessions.Get(SessionKey(stores.tenant, handle));
  if (!s.ok()) {
    return absl::Status(s.status().code(),
                        absl::StrCat(what, ": resident tensor '", handle.substr(0, 64),
                                     "' not found (deleted, or idle past --session_ttl)"));
  }
  return (*s)->Get(kResidentValue);
}

}  // namespace

absl::StatusOr<std::vector<Tensor>> GatherArguments(const v1::ExecuteRequest& req,
                                                    const CallStores& stores,
                                                    int64_t* message_bytes) {
  const int n = req.args_size() + req.arg_refs_size();
  std::map<uint32_t, const v1::ArgumentRef*> refs;
  for (const v1::ArgumentRef& ref : req.arg_refs()) {
    if (ref.index() >= static_cast<uint32_t>(n) || !refs.emplace(ref.index(), &ref).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          "arg_refs: index ", ref.index(), " is repeated or not below the ", n, " arguments"));
    }
  }
  std::vector<Tensor> args;
  args.reserve(n);
  int next_message = 0;
  for (int i = 0; i < n; ++i) {
    const std::string what = absl::StrCat("argument ", i);
    auto ref = refs.find(static_cast<uint32_t>(i));
    if (ref == refs.end()) {
      const v1::Tensor& msg = req.args(next_message++);
      if (static_cast<int64_t>(msg.data().size()) > stores.max_tensor_bytes) {
        return absl::ResourceExhaustedError(
            absl::StrCat(what, " has ", msg.data().size(),
                         " bytes, more than this server's limit of ", stores.max_tensor_bytes));
      }
      absl::StatusOr<Tensor> t = FromProto(msg, stores.max_tensor_bytes);
      if (!t.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(what, ": ", t.status().message()));
      }
      *message_bytes += static_cast<int64_t>(msg.data().size());
      args.push_back(*std::move(t));
      continue;
    }
    const v1::ArgumentRef& r = *ref->second;
    absl::StatusOr<Tensor> t =
        r.has_region() ? ReadRegionArgument(req, r, stores, what)
        : r.source_case() == r.kHandle
            ? ReadResident(r.handle(), stores, what)
            : absl::InvalidArgumentError(absl::StrCat(what, ": its ArgumentRef names no source"));
    if (!t.ok()) return t.status();
    args.push_back(*std::move(t));
  }
  return args;
}

uint64_t RegionBytes(const v1::ExecuteRequest& req) {
  uint64_t bytes = 0;
  for (const v1::ArgumentRef& ref : req.arg_refs()) bytes += ref.region().size();
  return bytes;
}

absl::StatusOr<OutputSlice> FindOutputSlice(const v1::ExecuteRequest& req,
                                            const CallStores& stores) {
  OutputSlice out;
  if (!req.has_output_region()) return out;
  const v1::RegionSlice& slice = req.output_region();
  ASSIGN_OR_RETURN(out.region, FindRegion(req, stores, slice.region()));
  RETURN_IF_ERROR(out.region->CheckSlice("output_region", slice.offset(), slice.size()));
  out.begin = slice.offset();
  out.end = slice.offset() + slice.size();
  return out;
}

absl::Status PutOutputs(const std::vector<Tensor>& outputs, const OutputSlice& slice,
                        int64_t max_message_bytes, v1::ExecuteResponse* resp,
                        int64_t* message_bytes) {
  // Where each output goes: its offset in the region, or -1 for the message. The message's size
  // is known before a byte is copied, so that an answer too large to send costs no copy.
  std::vector<int64_t> offsets;
  uint64_t cursor = slice.begin;
  int64_t in_message = 0;
  for (const Tensor& t : outputs) {
    const uint64_t at = (cursor + kOutputAlignment - 1) / kOutputAlignment * kOutputAlignment;
    const uint64_t n = static_cast<uint64_t>(t.nbytes());
    if (slice.region != nullptr && at <= slice.end && n <= slice.end - at) {
      offsets.push_back(static_cast<int64_t>(at));
      cursor = at + n;
    } else {
      offsets.push_back(-1);
      in_message += t.nbytes();
    }
  }
  if (max_message_bytes > 0 && in_message > max_message_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("the outputs take ", in_message,
                     " bytes, more than this server's largest message of ", max_message_bytes,
                     " bytes (--max_message_bytes): call ExecuteStream, or give an "
                     "output region"));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& t = outputs[i];
    if (offsets[i] >= 0) {
      const Tensor c = t.Contiguous();
      RETURN_IF_ERROR(slice.region->Write(static_cast<uint64_t>(offsets[i]),
                                          static_cast<uint64_t>(t.nbytes()), c.raw_data()));
      v1::Tensor* msg = resp->add_outputs();
      msg->set_dtype(ToProto(t.dtype()));
      for (int64_t d : t.shape()) msg->add_shape(d);
    } else {
      ToProto(t, resp->add_outputs());
    }
    if (slice.region != nullptr) resp->add_output_offsets(offsets[i]);
  }
  *message_bytes += in_message;
  return absl::OkStatus();
}

}  // namespace kiln::server
