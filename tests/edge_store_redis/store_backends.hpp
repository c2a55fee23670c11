// The two SessionStore implementations behind one test interface, so that one contract test body
// runs against both: the SQLite store on a temporary file and the Redis store on a real
// redis-server (one per test suite; every test gets its own key prefix, so tests never see each
// other's keys). open() may be called several times: each call is another "edge" (another
// connection to the same database or server).
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <memory>
#include <string>

#include "edge/store/redis/redis_session_store.hpp"
#include "edge/store/sqlite_session_store.hpp"
#include "store_test_support.hpp"
#include "tests/support/redis_server.hpp"
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

class RedisBackend {
 public:
  static constexpr const char* kName = "redis";
  RedisBackend() : prefix_("t" + std::to_string(next_id_++) + ":") {}

  static void start_server() {
    dir_ = std::make_unique<test::TempDir>();
    server_ = std::make_unique<test::RedisServer>(dir_->path().string());
  }
  static void stop_server() {
    server_.reset();
    dir_.reset();
  }
  static test::RedisServer& server() { return *server_; }

  RedisStoreOptions options() const {
    RedisStoreOptions o;
    o.endpoint.port = server_->port();
    o.prefix = prefix_;
    return o;
  }
  std::unique_ptr<SessionStore> open() { return open_redis(); }
  std::unique_ptr<RedisSessionStore> open_redis() {
    std::string error;
    auto store = RedisSessionStore::open(options(), error);
    EXPECT_NE(store, nullptr) << error;
    return store;
  }
  void corrupt(const std::string& dev_id, const std::string& bytes) {
    EXPECT_EQ(server_->command({"HSET", prefix_ + "dev2:{" + dev_id + "}", "state", bytes}), "0");
  }
  [[nodiscard]] const std::string& prefix() const noexcept { return prefix_; }

 private:
  static inline std::atomic<int> next_id_{0};
  static inline std::unique_ptr<test::TempDir> dir_;
  static inline std::unique_ptr<test::RedisServer> server_;
  std::string prefix_;
};

}  // namespace dsekp::edge::testing
