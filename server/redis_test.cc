// The Redis tier, the compile lease and the session store against a real redis-server.
#include "server/redis.h"

#include <gtest/gtest.h>

#include <thread>

#include "absl/strings/match.h"
#include "core/kiln.h"
#include "proto/convert/graph_convert.h"
#include "server/compiled_function.h"
#include "server/redis_cache.h"
#include "server/redis_sessions.h"
#include "tests/testing/redis_process.h"

namespace kiln::server {
namespace {

class RedisTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(process_.ready()) << "redis-server did not start (apt-get install redis-server)";
    redis_ = *Redis::Create(process_.address());
  }
  testing::RedisProcess process_;
  std::shared_ptr<Redis> redis_;
};

Tensor Scalar(double v) { return *Tensor::Of<double>(DType::kFloat64, {}, {v}); }

TEST(RedisAddressTest, RejectsWhatIsNotHostPort) {
  EXPECT_TRUE(Redis::Create("127.0.0.1:6379").ok());
  EXPECT_TRUE(Redis::Create("redis://cache:6380").ok());
  EXPECT_TRUE(Redis::Create("cache").ok());  // port 6379
  EXPECT_FALSE(Redis::Create("cache:port").ok());
  EXPECT_FALSE(Redis::Create(":6379").ok());
  EXPECT_FALSE(Redis::Create("cache:70000").ok());
}

TEST(RedisAddressTest, UnreachableIsUnavailableAndFastAfterTheFirstFailure) {
  auto redis = *Redis::Create(absl::StrCat("127.0.0.1:", testing::FreePort()));
  EXPECT_TRUE(absl::IsUnavailable(redis->Command({"PING"}).status()));
  EXPECT_FALSE(redis->up());
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(absl::IsUnavailable(redis->Command({"PING"}).status()));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(50));
}

TEST_F(RedisTest, EntriesAreChecksummedAndACorruptOneIsRemoved) {
  RedisCache cache(redis_, absl::Hours(1), absl::Seconds(10));
  const std::string id(64, 'a');
  EXPECT_TRUE(absl::IsNotFound(cache.Load(id).status()));
  ASSERT_TRUE(cache.Store(id, std::string("bytes\0of a function", 19)).ok());
  EXPECT_EQ(*cache.Load(id), std::string("bytes\0of a function", 19));
  auto ttl = redis_->Command({"PTTL", "kiln:fn:" + id});
  EXPECT_GT(ttl->integer, 3500 * 1000 - 60 * 1000);  // the expiry is set
  ASSERT_TRUE(redis_->Command({"SETRANGE", "kiln:fn:" + id, "70", "X"}).ok());
  EXPECT_TRUE(absl::IsDataLoss(cache.Load(id).status()));
  EXPECT_EQ(redis_->Command({"EXISTS", "kiln:fn:" + id})->integer, 0);
}

TEST_F(RedisTest, OneLeaseHolderRenewedUntilReleasedAndALapsedLeaseIsFree) {
  RedisCache holder(redis_, absl::Hours(1), absl::Milliseconds(900));
  RedisCache other(redis_, absl::Hours(1), absl::Milliseconds(900));
  const std::string id(64, 'b');
  EXPECT_TRUE(*holder.TryLease(id));
  EXPECT_FALSE(*other.TryLease(id));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // renewed every 300 ms
  EXPECT_FALSE(*other.TryLease(id));
  holder.Release(id);
  EXPECT_TRUE(*other.TryLease(id));
  // A holder that stops renewing (dies) loses the lease when it lapses.
  ASSERT_TRUE(
      redis_->Command({"SET", "kiln:lease:" + std::string(64, 'c'), "dead", "PX", "200"}).ok());
  EXPECT_FALSE(*holder.TryLease(std::string(64, 'c')));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_TRUE(*holder.TryLease(std::string(64, 'c')));
}

TEST_F(RedisTest, HottestIdsComeFirst) {
  RedisCache cache(redis_, absl::Hours(1), absl::Seconds(10));
  const std::string a(64, 'a'), b(64, 'b'), c(64, 'c');
  for (const std::string& id : {a, b, b, c, c, c}) cache.Touch(id);
  EXPECT_EQ(*cache.Hottest(2), (std::vector<std::string>{c, b}));
}

TEST_F(RedisTest, SessionsAreSharedByStoresAndWritesCompareAndSet) {
  SessionLimits limits;
  RedisSessionStore one(redis_, limits), two(redis_, limits);
  const std::string id = *one.Create();
  auto a = *one.Get(id);
  ASSERT_TRUE(a->Write({{"w", Scalar(1)}}).ok());
  auto b = *two.Get(id);  // another replica sees it
  SessionSnapshot read = *b->Read({"w"});
  EXPECT_EQ(read.values[0].ToString(), "1.0");
  // Two writers from the same version: the first wins, the second is ABORTED.
  ASSERT_TRUE(a->Write({{"w", Scalar(2)}}, read.version).ok());
  EXPECT_TRUE(absl::IsAborted(b->Write({{"w", Scalar(3)}}, read.version)));
  EXPECT_EQ(b->Get("w")->ToString(), "2.0");
  EXPECT_TRUE(absl::IsFailedPrecondition(b->Read({"w", "missing"}).status()));
  EXPECT_EQ((*b->List()).size(), 1u);
  ASSERT_TRUE(b->Delete("w").ok());
  EXPECT_TRUE(absl::IsNotFound(a->Get("w").status()));
  ASSERT_TRUE(two.Delete(id).ok());
  EXPECT_TRUE(absl::IsNotFound(one.Get(id).status()));
  EXPECT_TRUE(absl::IsNotFound(a->Write({{"w", Scalar(1)}})));
}

TEST_F(RedisTest, ACallRecordComesBackAndTheByteLimitHolds) {
  SessionLimits limits;
  limits.max_session_bytes = 200;
  RedisSessionStore store(redis_, limits);
  auto s = *store.Get(*store.Create());
  CallRecord record{"call-1", "outputs"};
  ASSERT_TRUE(s->Write({{"w", Scalar(1)}}, Session::kAnyVersion, &record).ok());
  EXPECT_EQ(*s->Recorded("call-1"), "outputs");
  EXPECT_TRUE(absl::IsNotFound(s->Recorded("call-2").status()));
  Tensor big = Tensor::Zeros(DType::kFloat64, {100});
  EXPECT_TRUE(absl::IsResourceExhausted(s->Write({{"big", big}})));
  EXPECT_TRUE(absl::IsNotFound(s->Get("big").status()));
}

TEST_F(RedisTest, ATenantsSessionQuotasHoldAcrossReplicas) {
  RedisSessionStore one(redis_, SessionLimits{}), two(redis_, SessionLimits{});
  const SessionOwner owner{"t", /*max_sessions=*/2, /*max_bytes=*/400};
  const std::string a = *one.Create(owner);
  ASSERT_TRUE(two.Create(owner).ok());
  absl::StatusOr<std::string> third = one.Create(owner);  // the quota counts both replicas'
  EXPECT_TRUE(absl::IsResourceExhausted(third.status())) << third.status();
  EXPECT_TRUE(one.Create({"other", 2, 400}).ok());  // another tenant's count is its own
  // Bytes: one session holds most of the quota, then another session of the tenant is refused.
  auto s = *one.Get(SessionKey("t", a));
  ASSERT_TRUE(s->Write({{"w", Tensor::Zeros(DType::kFloat64, {30})}}).ok());
  ASSERT_TRUE(two.Delete(SessionKey("t", a)).ok());  // deleting frees its count and bytes
  const std::string b = *two.Create(owner);
  auto t = *two.Get(SessionKey("t", b));
  ASSERT_TRUE(t->Write({{"w", Tensor::Zeros(DType::kFloat64, {30})}}).ok());
  absl::Status over = t->Write({{"v", Tensor::Zeros(DType::kFloat64, {30})}});
  EXPECT_TRUE(absl::IsResourceExhausted(over)) << over;
  EXPECT_TRUE(absl::StrContains(over.message(), "session_bytes=")) << over;
}

TEST_F(RedisTest, SessionsExpireWhenIdle) {
  SessionLimits limits;
  limits.ttl = absl::Seconds(1);
  RedisSessionStore store(redis_, limits);
  const std::string id = *store.Create();
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  ASSERT_TRUE(store.Get(id).ok());  // used: its idle time starts again
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  ASSERT_TRUE(store.Get(id).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_TRUE(absl::IsNotFound(store.Get(id).status()));
}

// `count += x` compiled, its count bound to the session's "count".
std::shared_ptr<const CompiledFunction> CountUp() {
  Var x = dscalar("x");
  Var count = dscalar("count");
  v1::CompileRequest request;
  *request.mutable_graph() = *GraphToProto({x, count}, {count + x});
  request.mutable_graph()->mutable_inputs(1)->set_shared("count");
  v1::Update* update = request.add_updates();
  update->set_input(1);
  *update->mutable_value() = request.graph().outputs(0);
  request.mutable_graph()->clear_outputs();
  auto job = PrepareCompile(request, GraphLimits{});
  EXPECT_TRUE(job.ok()) << job.status();
  return *Compile(*job);
}

TEST_F(RedisTest, ARetriedUpdateGetsItsRecordedOutputsAndUpdatesOnce) {
  RedisSessionStore store(redis_, SessionLimits{});
  auto s = *store.Get(*store.Create());
  ASSERT_TRUE(s->Write({{"count", Scalar(0)}}).ok());
  auto f = CountUp();
  ASSERT_TRUE(Execute(*f, {Scalar(1)}, s.get(), nullptr, {"call-a", false}).ok());
  // The reply was lost; gRPC retries with the same call id.
  ASSERT_TRUE(Execute(*f, {Scalar(1)}, s.get(), nullptr, {"call-a", true}).ok());
  EXPECT_EQ(s->Get("count")->ToString(), "1.0");
  ASSERT_TRUE(Execute(*f, {Scalar(1)}, s.get(), nullptr, {"call-b", true}).ok());  // first run
  EXPECT_EQ(s->Get("count")->ToString(), "2.0");
}

TEST_F(RedisTest, ConcurrentUpdatesFromTwoReplicasAreAllApplied) {
  RedisSessionStore one(redis_, SessionLimits{}), two(redis_, SessionLimits{});
  const std::string id = *one.Create();
  ASSERT_TRUE((*one.Get(id))->Write({{"count", Scalar(0)}}).ok());
  auto f = CountUp();
  std::vector<std::thread> threads;
  for (RedisSessionStore* store : {&one, &two, &one, &two}) {
    threads.emplace_back([store, &id, &f] {
      for (int i = 0; i < 50; ++i) {
        auto s = *store->Get(id);
        absl::StatusOr<std::vector<Tensor>> out = Execute(*f, {Scalar(1)}, s.get(), nullptr);
        EXPECT_TRUE(out.ok()) << out.status();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ((*one.Get(id))->Get("count")->ToString(), "200.0");
}

}  // namespace
}  // namespace kiln::server
