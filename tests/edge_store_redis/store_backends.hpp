// The SessionStore implementations behind one test interface, so that one contract test body
// runs against each: the SQLite store on a temporary file, the Redis store on a real
// redis-server and on a real Redis Cluster of 3 primaries and 3 replicas (one server or cluster
// per test suite; every test gets its own key prefix, so tests never see each other's keys). open()
// may be called several times: each call is another "edge" (another connection to the same database
// or server).
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <memory>
#include <string>
#include <utility>

#include "edge/store/redis/redis_key_slot.hpp"
#include "edge/store/redis/redis_session_store.hpp"
#include "edge/store/sqlite_session_store.hpp"
#include "engines/redis_cluster_nodes.hpp"
#include "engines/redis_server.hpp"
#include "store_test_support.hpp"
#include "tests/support/temp_dir.hpp"

namespace dsekp::edge::testing {

class SqliteBackend {
 public:
  static constexpr const char* kName = "sqlite";
  std::unique_ptr<SessionStore> open() {
    std::string error;
    auto store = SqliteSessionStore::open(dir_.file("edge.db"), {}, error);
    EXPECT_NE(store, nullptr) << error;
    return store;
  }
  /// Overwrites the stored state bytes of `dev_id` (an operator or attacker with write access).
  void corrupt(const std::string& dev_id, const std::string& bytes) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(dir_.file("edge.db").c_str(), &db), SQLITE_OK);
    sqlite3_stmt* s = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db, "UPDATE device_state SET state = ?1 WHERE dev_id = ?2", -1, &s,
                                 nullptr),
              SQLITE_OK);
    sqlite3_bind_blob(s, 1, bytes.data(), static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 2, dev_id.c_str(), -1, SQLITE_TRANSIENT);
    EXPECT_EQ(sqlite3_step(s), SQLITE_DONE);
    sqlite3_finalize(s);
    sqlite3_close(db);
  }

 private:
  TempDir dir_;
};

/// What the two Redis backends share: a key prefix of the test's own, the store opened with
/// the backend's options().
class RedisBackendBase {
 public:
  explicit RedisBackendBase(std::string prefix) : prefix_(std::move(prefix)) {}
  virtual ~RedisBackendBase() = default;
  [[nodiscard]] virtual RedisStoreOptions options() const = 0;
  std::unique_ptr<SessionStore> open() { return open_redis(); }
  std::unique_ptr<RedisSessionStore> open_redis() {
    std::string error;
    auto store = RedisSessionStore::open(options(), error);
    EXPECT_NE(store, nullptr) << error;
    return store;
  }
  [[nodiscard]] const std::string& prefix() const noexcept { return prefix_; }

 protected:
  std::string prefix_;
};

class RedisBackend : public RedisBackendBase {
 public:
  static constexpr const char* kName = "redis";
  RedisBackend() : RedisBackendBase("t" + std::to_string(next_id_++) + ":") {}

  static void start_server() {
    dir_ = std::make_unique<test::TempDir>();
    server_ = std::make_unique<engines::RedisServer>(dir_->path().string());
  }
  static void stop_server() {
    server_.reset();
    dir_.reset();
  }
  static engines::RedisServer& server() { return *server_; }

  [[nodiscard]] RedisStoreOptions options() const override {
    RedisStoreOptions o;
    o.endpoint.port = server_->port();
    o.prefix = prefix_;
    return o;
  }
  void corrupt(const std::string& dev_id, const std::string& bytes) {
    EXPECT_EQ(server_->command({"HSET", prefix_ + "dev2:{" + dev_id + "}", "state", bytes}), "0");
  }

 private:
  static inline std::atomic<int> next_id_{0};
  static inline std::unique_ptr<test::TempDir> dir_;
  static inline std::unique_ptr<engines::RedisServer> server_;
};

class RedisClusterBackend : public RedisBackendBase {
 public:
  static constexpr const char* kName = "redis_cluster";
  RedisClusterBackend() : RedisBackendBase("c" + std::to_string(next_id_++) + ":") {}

  static void start_server() {
    dir_ = std::make_unique<test::TempDir>();
    cluster_ = std::make_unique<engines::RedisClusterNodes>(dir_->path().string(), 3, 1);
  }
  static void stop_server() {
    cluster_.reset();
    dir_.reset();
  }
  static engines::RedisClusterNodes& cluster() { return *cluster_; }

  [[nodiscard]] RedisStoreOptions options() const override {
    RedisStoreOptions o;
    for (int i = 0; i < cluster_->size(); ++i)
      o.cluster_seeds.emplace_back("127.0.0.1", cluster_->port(i));
    o.prefix = prefix_;
    return o;
  }
  void corrupt(const std::string& dev_id, const std::string& bytes) {
    const std::string key = prefix_ + "dev2:{" + dev_id + "}";
    const int primary = cluster_->primary_of(redis::key_slot(key));
    EXPECT_EQ(cluster_->command(primary, {"HSET", key, "state", bytes}), "0");
  }

 private:
  static inline std::atomic<int> next_id_{0};
  static inline std::unique_ptr<test::TempDir> dir_;
  static inline std::unique_ptr<engines::RedisClusterNodes> cluster_;
};

}  // namespace dsekp::edge::testing
