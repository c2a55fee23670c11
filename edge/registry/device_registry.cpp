// Device registry operations on SQLite (see device_registry.hpp for the design).
#include "device_registry.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <string>

#include <sqlite3.h>

#include "registry_schema.hpp"
#include "secure_file.hpp"
#include "text_encoding.hpp"
#include "topic_prefix.hpp"

namespace dsekp::edge {
namespace {

std::int64_t unix_now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

RegistryStatus validate_dev_id(std::string_view dev_id, DevId& out) {
  if (out.assign(dev_id) == Error::ok) return {};
  return {RegistryErrc::invalid_dev_id, "invalid dev_id \"" + std::string(dev_id.substr(0, 80)) +
                                            "\": 1-64 characters of A-Z a-z 0-9 . _ - are allowed"};
}

RegistryStatus unknown(std::string_view dev_id) {
  return {RegistryErrc::not_found, "no device \"" + std::string(dev_id) + "\" in the registry"};
}

/// Reads the secret columns of the current row into strong types, refusing wrong sizes (which
/// the schema's CHECKs should make impossible, so a mismatch means the file was tampered with).
RegistryStatus read_credentials(const RegistryStatement& row, int secret_col, int psk_col,
                                int generation_col, int ratchet_col, int erased_col,
                                DeviceCredentials& out) {
  if (!out.dev_secret.assign(row.column_blob(secret_col)) ||
      !out.psk_key.assign(row.column_blob(psk_col)))
    return {RegistryErrc::corrupt,
            "stored key of \"" + std::string(out.dev_id.str()) + "\" has the wrong size"};
  out.generation = static_cast<std::uint64_t>(row.column_int64(generation_col));
  out.ratchet = row.column_int64(ratchet_col) != 0;
  out.secret_erased = row.column_optional_int64(erased_col).has_value();
  return {};
}

}  // namespace

DeviceRegistry::~DeviceRegistry() = default;

RegistryStatus DeviceRegistry::open(const std::string& path, OpenMode mode,
                                    std::unique_ptr<DeviceRegistry>& out) {
  bool created = false;
  if (mode == OpenMode::create_if_missing) {
    // The file is created 0600 before SQLite touches it; SQLite then gives its -wal and -shm
    // files the database file's permissions.
    if (auto s = create_file_if_missing(path, 0600, created); !s.ok()) return s;
  }
  if (auto s = check_private_file(path); !s.ok()) return s;

  std::unique_ptr<DeviceRegistry> registry(new DeviceRegistry());
  registry->path_ = path;
  if (auto s = registry->initialize(mode == OpenMode::create_if_missing); !s.ok())
    return {s.code(), path + ": " + s.message()};
  out = std::move(registry);
  return {};
}

RegistryStatus DeviceRegistry::initialize(bool may_create) {
  if (auto s = db_.open(path_); !s.ok()) return s;
  // The first statement reads the file header: a file that is not SQLite fails here.
  if (auto s = db_.exec("PRAGMA secure_delete = ON"); !s.ok()) return s;
  if (auto s = db_.exec("PRAGMA journal_mode = WAL"); !s.ok()) {
    if (sqlite3_errcode(db_.handle()) == SQLITE_NOTADB)
      return {RegistryErrc::not_a_registry, "not an SQLite database"};
    return s;
  }
  if (auto s = ensure_registry_schema(db_, may_create, rng_, unix_now_ms()); !s.ok()) return s;
  if (auto s = load_edge_salt(); !s.ok()) return s;
  if (auto s = db_.prepare(
          "SELECT dev_secret, psk_key, generation, ratchet, secret_erased_ms FROM devices "
          "WHERE dev_id = ?1",
          find_stmt_);
      !s.ok())
    return s;
  return db_.prepare("SELECT generation FROM deployment WHERE id = 1", generation_stmt_);
}

RegistryStatus DeviceRegistry::load_edge_salt() {
  RegistryStatement stmt;
  if (auto s = db_.prepare("SELECT edge_salt FROM deployment WHERE id = 1", stmt); !s.ok())
    return s;
  bool row = false;
  if (auto s = stmt.step(row); !s.ok()) return s;
  if (!row || edge_salt_.assign(stmt.column_blob(0)) != Error::ok)
    return {RegistryErrc::corrupt, "EDGE_SALT missing or not 16-32 bytes"};
  return {};
}

RegistryStatus DeviceRegistry::next_generation(std::uint64_t& out) {
  // Inside the caller's write transaction, so no other writer can take the same value.
  if (auto s = db_.exec("UPDATE deployment SET generation = generation + 1 WHERE id = 1"); !s.ok())
    return s;
  std::int64_t value = 0;
  if (auto s = db_.query_int64("SELECT generation FROM deployment WHERE id = 1", value); !s.ok())
    return s;
  out = static_cast<std::uint64_t>(value);
  return {};
}

RegistryStatus DeviceRegistry::draw_secrets(DeviceMaterial& out) {
  std::array<std::uint8_t, kBrokerPasswordBytes> password{};
  if (rng_.fill(out.credentials.dev_secret.mutable_view()) != Error::ok ||
      rng_.fill(out.credentials.psk_key.mutable_view()) != Error::ok ||
      rng_.fill(password) != Error::ok)
    return {RegistryErrc::crypto_failure, "the CSPRNG failed to draw device secrets"};
  out.broker_password = to_hex(password);
  secure_wipe(password);
  out.broker_username = std::string(out.credentials.dev_id.str());
  (void)out.edge_salt.assign(edge_salt_.view());  // same sizes: cannot fail
  if (auto s = uplink_topics(out.uplink_topics); !s.ok()) return s;
  return topic_prefix(out.topic_prefix);
}

RegistryStatus DeviceRegistry::store_device(const DeviceMaterial& material, bool is_rotation) {
  const DeviceCredentials& c = material.credentials;
  RegistryStatement stmt;
  // A rotation without a broker keeps the recorded one.
  const char* sql =
      is_rotation
          ? "UPDATE devices SET dev_secret = ?2, psk_key = ?3, broker_password = ?4, "
            "rotated_ms = ?5, generation = ?6, broker = COALESCE(?7, broker), ratchet = ?8, "
            "secret_erased_ms = NULL WHERE dev_id = ?1"
          : "INSERT INTO devices (dev_id, dev_secret, psk_key, broker_password, created_ms, "
            "generation, broker, ratchet) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";
  if (auto s = db_.prepare(sql, stmt); !s.ok()) return s;
  if (auto s = stmt.bind_text(1, c.dev_id.str()); !s.ok()) return s;
  if (auto s = stmt.bind_blob(2, c.dev_secret.view()); !s.ok()) return s;
  if (auto s = stmt.bind_blob(3, c.psk_key.view()); !s.ok()) return s;
  if (auto s = stmt.bind_text(4, material.broker_password); !s.ok()) return s;
  if (auto s = stmt.bind_int64(5, unix_now_ms()); !s.ok()) return s;
  if (auto s = stmt.bind_int64(6, static_cast<std::int64_t>(c.generation)); !s.ok()) return s;
  if (!material.broker.empty())
    if (auto s = stmt.bind_text(7, material.broker); !s.ok()) return s;
  if (auto s = stmt.bind_int64(8, c.ratchet ? 1 : 0); !s.ok()) return s;
  return stmt.run();
}

RegistryStatus DeviceRegistry::add(std::string_view dev_id, DeviceMaterial& out,
                                   std::string_view broker, bool ratchet) {
  if (auto s = validate_dev_id(dev_id, out.credentials.dev_id); !s.ok()) return s;
  out.broker = std::string(broker);
  out.credentials.ratchet = ratchet;
  SqliteTransaction tx(db_);
  if (auto s = tx.begin(); !s.ok()) return s;
  if (auto s = draw_secrets(out); !s.ok()) return s;
  if (auto s = insert_new_device(out); !s.ok()) return s;
  return tx.commit();
}

RegistryStatus DeviceRegistry::insert_new_device(DeviceMaterial& material) {
  const std::string dev_id(material.credentials.dev_id.str());
  DeviceInfo existing;
  if (auto s = info(dev_id, existing); s.ok())
    return {RegistryErrc::already_exists,
            "device \"" + dev_id + "\" is already registered (use rotate for new keys)"};
  else if (s.code() != RegistryErrc::not_found)
    return s;
  if (ServiceAccount taken; account(dev_id, taken).ok())
    return {RegistryErrc::name_conflict, "\"" + dev_id + "\" is already a broker account (" +
                                             account_role_name(taken.role) + ")"};
  if (auto s = next_generation(material.credentials.generation); !s.ok()) return s;
  if (auto s = store_device(material, false); !s.ok()) return s;
  RegistryStatement forget;
  if (auto s = db_.prepare("DELETE FROM removed_devices WHERE dev_id = ?1", forget); !s.ok())
    return s;
  if (auto s = forget.bind_text(1, dev_id); !s.ok()) return s;
  return forget.run();
}

RegistryStatus DeviceRegistry::rotate(std::string_view dev_id, DeviceMaterial& out,
                                      std::string_view broker, std::optional<bool> ratchet) {
  if (auto s = validate_dev_id(dev_id, out.credentials.dev_id); !s.ok()) return s;
  out.broker = std::string(broker);
  SqliteTransaction tx(db_);
  if (auto s = tx.begin(); !s.ok()) return s;
  DeviceInfo existing;
  if (auto s = info(dev_id, existing); !s.ok()) return s;
  out.credentials.ratchet = ratchet.value_or(existing.ratchet);
  if (auto s = draw_secrets(out); !s.ok()) return s;
  if (auto s = next_generation(out.credentials.generation); !s.ok()) return s;
  if (auto s = store_device(out, true); !s.ok()) return s;
  if (broker.empty()) {
    RegistryStatement recorded;
    if (auto s = db_.prepare("SELECT broker FROM devices WHERE dev_id = ?1", recorded); !s.ok())
      return s;
    if (auto s = recorded.bind_text(1, dev_id); !s.ok()) return s;
    bool row = false;
    if (auto s = recorded.step(row); !s.ok()) return s;
    if (row) out.broker = recorded.column_text(0);
  }
  return tx.commit();
}

RegistryStatus DeviceRegistry::remove(std::string_view dev_id) {
  DevId id;
  if (auto s = validate_dev_id(dev_id, id); !s.ok()) return s;
  SqliteTransaction tx(db_);
  if (auto s = tx.begin(); !s.ok()) return s;
  RegistryStatement del;
  if (auto s = db_.prepare("DELETE FROM devices WHERE dev_id = ?1", del); !s.ok()) return s;
  if (auto s = del.bind_text(1, dev_id); !s.ok()) return s;
  if (auto s = del.run(); !s.ok()) return s;
  if (sqlite3_changes(db_.handle()) == 0) return unknown(dev_id);
  std::uint64_t generation = 0;
  if (auto s = next_generation(generation); !s.ok()) return s;
  RegistryStatement tomb;
  if (auto s =
          db_.prepare("INSERT OR REPLACE INTO removed_devices (dev_id, removed_ms, generation) "
                      "VALUES (?1, ?2, ?3)",
                      tomb);
      !s.ok())
    return s;
  if (auto s = tomb.bind_text(1, dev_id); !s.ok()) return s;
  if (auto s = tomb.bind_int64(2, unix_now_ms()); !s.ok()) return s;
  if (auto s = tomb.bind_int64(3, static_cast<std::int64_t>(generation)); !s.ok()) return s;
  if (auto s = tomb.run(); !s.ok()) return s;
  return tx.commit();
}

RegistryStatus DeviceRegistry::find(std::string_view dev_id, DeviceCredentials& out) {
  if (auto s = validate_dev_id(dev_id, out.dev_id); !s.ok()) return s;
  find_stmt_.reset();
  if (auto s = find_stmt_.bind_text(1, dev_id); !s.ok()) return s;
  bool row = false;
  auto s = find_stmt_.step(row);
  if (s.ok() && !row) s = unknown(dev_id);
  if (s.ok()) s = read_credentials(find_stmt_, 0, 1, 2, 3, 4, out);
  // Reset now rather than at the next call: it ends the read transaction (so the WAL can be
  // checkpointed) and lets SQLite release the row's copy of the secrets.
  find_stmt_.reset();
  return s;
}

RegistryStatus DeviceRegistry::material(std::string_view dev_id, DeviceMaterial& out) {
  if (auto s = validate_dev_id(dev_id, out.credentials.dev_id); !s.ok()) return s;
  RegistryStatement stmt;
  if (auto s = db_.prepare("SELECT dev_secret, psk_key, generation, broker_password, broker, "
                           "ratchet, secret_erased_ms FROM devices WHERE dev_id = ?1",
                           stmt);
      !s.ok())
    return s;
  if (auto s = stmt.bind_text(1, dev_id); !s.ok()) return s;
  bool row = false;
  if (auto s = stmt.step(row); !s.ok()) return s;
  if (!row) return unknown(dev_id);
  if (auto s = read_credentials(stmt, 0, 1, 2, 5, 6, out.credentials); !s.ok()) return s;
  if (out.credentials.secret_erased)
    return {RegistryErrc::secret_erased,
            "the provisioned secret of \"" + std::string(dev_id) +
                "\" was erased after its first ratchet step (PROTOCOL.md 6.6): only the edge's "
                "state holds its current secret; `dsekp keys rotate` re-provisions it"};
  out.broker_username = std::string(dev_id);
  out.broker_password = stmt.column_text(3);
  out.broker = stmt.column_text(4);
  (void)out.edge_salt.assign(edge_salt_.view());
  if (auto s = uplink_topics(out.uplink_topics); !s.ok()) return s;
  return topic_prefix(out.topic_prefix);
}

RegistryStatus DeviceRegistry::erase_provisioned_secret(std::string_view dev_id,
                                                        std::uint64_t generation, bool& erased) {
  erased = false;
  // Without waiting: the caller is the edge's message loop, and a writer holding the lock
  // (`dsekp keys`) makes this a busy error, tried again later, rather than a stall.
  sqlite3_busy_timeout(db_.handle(), 0);
  RegistryStatement stmt;
  // zeroblob keeps the column's size CHECK; secure_delete overwrites the old record's bytes.
  RegistryStatus s = db_.prepare(
      "UPDATE devices SET dev_secret = zeroblob(32), secret_erased_ms = ?3 "
      "WHERE dev_id = ?1 AND generation = ?2 AND ratchet = 1 AND secret_erased_ms IS NULL",
      stmt);
  if (s.ok()) s = stmt.bind_text(1, dev_id);
  if (s.ok()) s = stmt.bind_int64(2, static_cast<std::int64_t>(generation));
  if (s.ok()) s = stmt.bind_int64(3, unix_now_ms());
  if (s.ok()) s = stmt.run();
  if (s.ok()) erased = sqlite3_changes(db_.handle()) > 0;
  sqlite3_busy_timeout(db_.handle(), kRegistryBusyTimeoutMs);
  return s;
}

RegistryStatus DeviceRegistry::checkpoint_wal(bool& complete) {
  // A truncating checkpoint writes the current pages into the database file and empties the
  // -wal file, so neither keeps an older page image (a provisioned secret's, say). Without
  // waiting for readers: incomplete is not an error, the caller tries again later.
  complete = false;
  sqlite3_busy_timeout(db_.handle(), 0);
  int log = -1;
  int checkpointed = -1;
  const int rc = sqlite3_wal_checkpoint_v2(db_.handle(), nullptr, SQLITE_CHECKPOINT_TRUNCATE, &log,
                                           &checkpointed);
  sqlite3_busy_timeout(db_.handle(), kRegistryBusyTimeoutMs);
  if (rc == SQLITE_BUSY) return {};
  if (rc != SQLITE_OK)
    return {RegistryErrc::database, std::string("checkpoint: ") + sqlite3_errmsg(db_.handle())};
  complete = log == 0 && checkpointed == 0;  // TRUNCATE leaves an empty log when it completes
  return {};
}

RegistryStatus DeviceRegistry::info(std::string_view dev_id, DeviceInfo& out) {
  RegistryStatement stmt;
  if (auto s = db_.prepare(
          "SELECT created_ms, rotated_ms, generation, ratchet, secret_erased_ms FROM devices "
          "WHERE dev_id = ?1",
          stmt);
      !s.ok())
    return s;
  if (auto s = stmt.bind_text(1, dev_id); !s.ok()) return s;
  bool row = false;
  if (auto s = stmt.step(row); !s.ok()) return s;
  if (!row) return unknown(dev_id);
  out.dev_id = std::string(dev_id);
  out.created_ms = stmt.column_int64(0);
  out.rotated_ms = stmt.column_optional_int64(1);
  out.generation = static_cast<std::uint64_t>(stmt.column_int64(2));
  out.ratchet = stmt.column_int64(3) != 0;
  out.secret_erased_ms = stmt.column_optional_int64(4);
  return {};
}

RegistryStatus DeviceRegistry::list(std::vector<DeviceInfo>& out) {
  out.clear();
  RegistryStatement stmt;
  if (auto s = db_.prepare(
          "SELECT dev_id, created_ms, rotated_ms, generation, ratchet, secret_erased_ms FROM "
          "devices ORDER BY dev_id",
          stmt);
      !s.ok())
    return s;
  for (;;) {
    bool row = false;
    if (auto s = stmt.step(row); !s.ok()) return s;
    if (!row) return {};
    out.push_back({stmt.column_text(0), stmt.column_int64(1), stmt.column_optional_int64(2),
                   static_cast<std::uint64_t>(stmt.column_int64(3)), stmt.column_int64(4) != 0,
                   stmt.column_optional_int64(5)});
  }
}

// One read of the deployment's generation; with `data_version`, also the file's data version,
// taken inside that read's transaction, whose start is where SQLite checks the file for commits
// by other connections (a file control, not the pragma_data_version table: that one prepares
// and runs a PRAGMA on every read, and change_mark() runs at the start of every burst).
RegistryStatus DeviceRegistry::read_generation(std::uint64_t& generation,
                                               std::uint32_t* data_version) {
  generation_stmt_.reset();
  bool row = false;
  auto s = generation_stmt_.step(row);
  if (s.ok() && !row) s = {RegistryErrc::corrupt, "the deployment row is missing"};
  int rc = SQLITE_OK;
  if (s.ok()) {
    generation = static_cast<std::uint64_t>(generation_stmt_.column_int64(0));
    if (data_version != nullptr) {
      unsigned int version = 0;
      rc = sqlite3_file_control(db_.handle(), "main", SQLITE_FCNTL_DATA_VERSION, &version);
      *data_version = version;
    }
  }
  generation_stmt_.reset();  // ends the read transaction before anything else can throw
  if (rc != SQLITE_OK)
    return {RegistryErrc::database, std::string("data version: ") + sqlite3_errstr(rc)};
  return s;
}

RegistryStatus DeviceRegistry::change_mark(RegistryChangeMark& out) {
  return read_generation(out.generation, &out.data_version);
}

RegistryStatus DeviceRegistry::generation(std::uint64_t& out) {
  return read_generation(out, nullptr);
}

RegistryStatus DeviceRegistry::changes_since(std::uint64_t since, ChangeSet& out) {
  out.changes.clear();
  // One read transaction, so the generation and the list describe the same snapshot.
  if (auto s = db_.exec("BEGIN"); !s.ok()) return s;
  struct EndRead {
    SqliteDb& db;
    ~EndRead() { (void)db.exec("COMMIT"); }
  } end_read{db_};
  if (auto s = generation(out.generation); !s.ok()) return s;
  RegistryStatement stmt;
  if (auto s =
          db_.prepare("SELECT dev_id, generation, 0 FROM devices WHERE generation > ?1 UNION ALL "
                      "SELECT dev_id, generation, 1 FROM removed_devices WHERE generation > ?1 "
                      "ORDER BY 2",
                      stmt);
      !s.ok())
    return s;
  if (auto s = stmt.bind_int64(1, static_cast<std::int64_t>(since)); !s.ok()) return s;
  for (;;) {
    bool row = false;
    if (auto s = stmt.step(row); !s.ok()) return s;
    if (!row) return {};
    out.changes.push_back({stmt.column_text(0), static_cast<std::uint64_t>(stmt.column_int64(1)),
                           stmt.column_int64(2) != 0});
  }
}

RegistryStatus DeviceRegistry::device_broker_accounts(std::vector<BrokerAccount>& out) {
  out.clear();
  RegistryStatement stmt;
  if (auto s = db_.prepare("SELECT dev_id, broker_password FROM devices ORDER BY dev_id", stmt);
      !s.ok())
    return s;
  for (;;) {
    bool row = false;
    if (auto s = stmt.step(row); !s.ok()) return s;
    if (!row) return {};
    out.push_back({stmt.column_text(0), stmt.column_text(1)});
  }
}

RegistryStatus DeviceRegistry::set_edge_broker_user(std::string_view username, BrokerAccount& out) {
  // Same alphabet as dev_id: no ':' (the password file's separator), no '+', '#' or '/' (which
  // Mosquitto refuses in %u ACL patterns) and no spaces.
  if (!is_valid_dev_id(username))
    return {RegistryErrc::invalid_name, "invalid edge broker user \"" +
                                            std::string(username.substr(0, 80)) +
                                            "\": 1-64 characters of A-Z a-z 0-9 . _ - are allowed"};
  SqliteTransaction tx(db_);
  if (auto s = tx.begin(); !s.ok()) return s;
  DeviceInfo device;
  if (auto s = info(username, device); s.ok())
    return {RegistryErrc::name_conflict, "\"" + std::string(username) +
                                             "\" is a registered dev_id; the edge needs a broker "
                                             "user name of its own"};
  if (ServiceAccount taken; account(username, taken).ok() && taken.role != AccountRole::edge)
    return {RegistryErrc::name_conflict,
            "\"" + std::string(username) + "\" is a " + account_role_name(taken.role) + " account"};
  RegistryStatement stmt;
  if (auto s = db_.prepare("UPDATE deployment SET edge_broker_user = ?1 WHERE id = 1", stmt);
      !s.ok())
    return s;
  if (auto s = stmt.bind_text(1, username); !s.ok()) return s;
  if (auto s = stmt.run(); !s.ok()) return s;
  if (auto s = tx.commit(); !s.ok()) return s;
  return edge_broker_account(out);
}

RegistryStatus DeviceRegistry::edge_broker_account(BrokerAccount& out) {
  RegistryStatement stmt;
  if (auto s = db_.prepare(
          "SELECT edge_broker_user, edge_broker_password FROM deployment WHERE id = 1", stmt);
      !s.ok())
    return s;
  bool row = false;
  if (auto s = stmt.step(row); !s.ok()) return s;
  if (!row) return {RegistryErrc::corrupt, "the deployment row is missing"};
  out.username = stmt.column_text(0);
  out.password = stmt.column_text(1);
  if (out.username.empty())
    return {RegistryErrc::not_found,
            "no edge broker user yet (run dsekp keys broker-config --edge-user NAME)"};
  return {};
}

RegistryStatus DeviceRegistry::uplink_topics(UplinkTopics& out) {
  RegistryStatement stmt;
  if (auto s = db_.prepare("SELECT uplink_topics FROM deployment WHERE id = 1", stmt); !s.ok())
    return s;
  bool row = false;
  if (auto s = stmt.step(row); !s.ok()) return s;
  const std::optional<UplinkTopics> value =
      row ? parse_uplink_topics(stmt.column_text(0)) : std::nullopt;
  if (!value) return {RegistryErrc::corrupt, "the deployment's uplink topics are unreadable"};
  out = *value;
  return {};
}

RegistryStatus DeviceRegistry::set_uplink_topics(UplinkTopics topics) {
  RegistryStatement stmt;
  RegistryStatus s = db_.prepare("UPDATE deployment SET uplink_topics = ?1 WHERE id = 1", stmt);
  if (s.ok()) s = stmt.bind_text(1, uplink_topics_name(topics));
  if (s.ok()) s = stmt.run();
  return s;
}

RegistryStatus DeviceRegistry::topic_prefix(std::string& out) {
  RegistryStatement stmt;
  if (auto s = db_.prepare("SELECT topic_prefix FROM deployment WHERE id = 1", stmt); !s.ok())
    return s;
  bool row = false;
  if (auto s = stmt.step(row); !s.ok()) return s;
  if (!row) return {RegistryErrc::corrupt, "the deployment row is missing"};
  out = stmt.column_text(0);
  return {};
}

RegistryStatus DeviceRegistry::set_topic_prefix(std::string_view prefix) {
  if (const std::string why = topic_prefix_problem(prefix); !why.empty())
    return {RegistryErrc::invalid_argument, why};
  RegistryStatement stmt;
  RegistryStatus s = db_.prepare("UPDATE deployment SET topic_prefix = ?1 WHERE id = 1", stmt);
  if (s.ok()) s = stmt.bind_text(1, prefix);
  if (s.ok()) s = stmt.run();
  return s;
}

RegistryStatus DeviceRegistry::admin_key(std::array<std::uint8_t, 32>& out) {
  RegistryStatement stmt;
  if (auto s = db_.prepare("SELECT key FROM admin_key WHERE id = 1", stmt); !s.ok()) return s;
  bool row = false;
  if (auto s = stmt.step(row); !s.ok()) return s;
  const ByteView key = row ? stmt.column_blob(0) : ByteView{};
  if (key.size() != out.size()) return {RegistryErrc::corrupt, "the admin key is missing"};
  std::copy(key.begin(), key.end(), out.begin());
  return {};
}

}  // namespace dsekp::edge
