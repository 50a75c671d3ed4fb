// Request and response messages of a call on one protobuf Arena: a graph of 100,000 nodes is
// parsed, built and dropped without a heap allocation per message (freeing such a graph from
// the heap took longer than building it).
#ifndef KILN_SERVER_ARENA_ALLOCATOR_H_
#define KILN_SERVER_ARENA_ALLOCATOR_H_

#include <google/protobuf/arena.h>
#include <grpcpp/support/message_allocator.h>

#include <cstdint>

#include "server/request_budget.h"

namespace kiln::server {

template <typename Request, typename Response>
class ArenaAllocator : public grpc::MessageAllocator<Request, Response> {
 public:
  grpc::MessageHolder<Request, Response>* AllocateMessages() override { return new Holder(); }

 private:
  class Holder : public grpc::MessageHolder<Request, Response> {
   public:
    Holder() {
      this->set_request(google::protobuf::Arena::CreateMessage<Request>(&arena_));
      this->set_response(google::protobuf::Arena::CreateMessage<Response>(&arena_));
    }
    // Frees the call's messages; a call that held much gives the memory back to the system.
    void Release() override {
      const bool large = arena_.SpaceAllocated() > (uint64_t{64} << 20);
      delete this;
      if (large) ReleaseFreeMemory();
    }

   private:
    google::protobuf::Arena arena_;
  };
};

}  // namespace kiln::server

#endif  // KILN_SERVER_ARENA_ALLOCATOR_H_
