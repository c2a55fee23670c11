// The fuzzed edge's registry and store (see edge_fixture.hpp).
#include "edge_fixture.hpp"

#include <sqlite3.h>

#include <string>

#include "fuzz_support.hpp"
#include "tests/support/temp_dir.hpp"

namespace dsekp::fuzz {
namespace {

constexpr std::array<const char*, EdgeFixture::kDevices> kDevIds = {"esp32-01", "esp32-02",
                                                                    "sensor.room_3", "ghost-9"};

Bytes counting(std::size_t n, std::uint8_t first) {
  Bytes out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<std::uint8_t>(first + i);
  return out;
}

void run_sql(sqlite3* db, const char* sql, const Bytes& a, const Bytes& b, const char* text) {
  sqlite3_stmt* s = nullptr;
  bool ok = sqlite3_prepare_v2(db, sql, -1, &s, nullptr) == SQLITE_OK;
  ok = ok &&
       sqlite3_bind_blob(s, 1, a.data(), static_cast<int>(a.size()), SQLITE_STATIC) == SQLITE_OK;
  if (!b.empty()) {
    ok = ok &&
         sqlite3_bind_blob(s, 2, b.data(), static_cast<int>(b.size()), SQLITE_STATIC) == SQLITE_OK;
  }
  if (text != nullptr) ok = ok && sqlite3_bind_text(s, 3, text, -1, SQLITE_STATIC) == SQLITE_OK;
  ok = ok && sqlite3_step(s) == SQLITE_DONE && sqlite3_changes(db) == 1;
  sqlite3_finalize(s);
  check(ok, "fixture: overwriting the registry's random keys failed", sqlite3_errmsg(db));
}

// Replaces the random EDGE_SALT and every device's DEV_SECRET / PSK_KEY by fixed patterns.
void make_keys_deterministic(const std::string& path) {
  sqlite3* db = nullptr;
  check(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK,
        "fixture: cannot open the registry", path);
  // Not the golden trace's values: its frames (in the seeds) must be foreign to this edge.
  run_sql(db, "UPDATE deployment SET edge_salt = ?1 WHERE id = 1", counting(32, 0x50), {}, nullptr);
  for (std::size_t i = 0; i < EdgeFixture::kRegistered; ++i) {
    run_sql(db, "UPDATE devices SET dev_secret = ?1, psk_key = ?2 WHERE dev_id = ?3",
            counting(32, static_cast<std::uint8_t>(0x20 + 0x30 * i)),
            counting(16, static_cast<std::uint8_t>(0x90 + 0x10 * i)), kDevIds[i]);
  }
  sqlite3_close(db);
}

dsekp::test::TempDir& temp_dir() {
  static dsekp::test::TempDir dir;  // removed at exit
  return dir;
}

}  // namespace

EdgeFixture& EdgeFixture::instance() {
  static EdgeFixture fixture;
  return fixture;
}

EdgeFixture::EdgeFixture() {
  const std::string registry_path = temp_dir().file("registry.db");
  {
    std::unique_ptr<edge::DeviceRegistry> provisioning;
    const auto s =
        edge::DeviceRegistry::open(registry_path, edge::OpenMode::create_if_missing, provisioning);
    check(s.ok(), "fixture: registry", s.message());
    for (std::size_t i = 0; i < kRegistered; ++i) {
      const auto added = provisioning->add(kDevIds[i], materials_[i], {}, i == kRatcheting);
      check(added.ok(), "fixture: keys add", added.message());
    }
  }
  make_keys_deterministic(registry_path);
  const auto s =
      edge::DeviceRegistry::open(registry_path, edge::OpenMode::existing_only, registry_);
  check(s.ok(), "fixture: registry reopen", s.message());
  for (std::size_t i = 0; i < kRegistered; ++i) {
    const auto m = registry_->material(kDevIds[i], materials_[i]);
    check(m.ok(), "fixture: keys show", m.message());
  }
  // The unregistered device: same salt, its own secret.
  edge::DeviceMaterial& ghost = materials_[kRegistered];
  check(ghost.credentials.dev_id.assign(kDevIds[kRegistered]) == Error::ok &&
            ghost.credentials.dev_secret.assign(ByteView(counting(32, 0xc0))) &&
            ghost.credentials.psk_key.assign(ByteView(counting(16, 0xe0))),
        "fixture: unregistered device");
  ghost.edge_salt = registry_->edge_salt();

  std::string error;
  store_ = edge::SqliteSessionStore::open(temp_dir().file("state.db"), {}, error);
  check(store_ != nullptr, "fixture: session store", error);
  generations_ = edge::SqliteCredentialGenerations::open(*store_, error);
  check(generations_ != nullptr, "fixture: credential generations", error);
}

void EdgeFixture::reset() {
  edge::Transaction unit(*store_);
  check(unit.status().ok(), "fixture: reset begin");
  for (const edge::DeviceMaterial& m : materials_) {
    check(store_->remove(m.credentials.dev_id).ok(), "fixture: reset remove");
    check(generations_->remove(m.credentials.dev_id).ok(), "fixture: reset generation");
  }
  check(unit.commit().ok(), "fixture: reset commit");
}

}  // namespace dsekp::fuzz
