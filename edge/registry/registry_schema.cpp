// Schema creation and recognition (see registry_schema.hpp and device_registry.hpp).
#include "registry_schema.hpp"

#include <array>
#include <string>

#include "device_registry.hpp"
#include "text_encoding.hpp"

namespace dsekp::edge {
namespace {

// STRICT tables make SQLite enforce the column types; the CHECKs enforce the protocol's sizes
// so that no other writer can store a DEV_SECRET the edge would refuse to load.
constexpr const char* kCreateTables = R"sql(
CREATE TABLE deployment (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  schema_version INTEGER NOT NULL,
  edge_salt BLOB NOT NULL CHECK (length(edge_salt) BETWEEN 16 AND 32),
  generation INTEGER NOT NULL CHECK (generation >= 0),
  created_ms INTEGER NOT NULL,
  edge_broker_user TEXT,
  edge_broker_password TEXT NOT NULL
) STRICT;
CREATE TABLE devices (
  dev_id TEXT PRIMARY KEY NOT NULL CHECK (length(dev_id) BETWEEN 1 AND 64),
  dev_secret BLOB NOT NULL CHECK (length(dev_secret) = 32),
  psk_key BLOB NOT NULL CHECK (length(psk_key) = 16),
  broker_password TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  rotated_ms INTEGER,
  generation INTEGER NOT NULL UNIQUE
) STRICT, WITHOUT ROWID;
CREATE TABLE removed_devices (
  dev_id TEXT PRIMARY KEY NOT NULL,
  removed_ms INTEGER NOT NULL,
  generation INTEGER NOT NULL UNIQUE
) STRICT, WITHOUT ROWID;
)sql";

// Version 2: broker accounts that are not devices (more edges, telemetry readers, downlink
// senders). Created by a new registry and added to a version 1 registry when it is opened.
constexpr const char* kCreateAccounts = R"sql(
CREATE TABLE admin_key (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  key BLOB NOT NULL CHECK (length(key) = 32)
) STRICT;
CREATE TABLE broker_accounts (
  username TEXT PRIMARY KEY NOT NULL CHECK (length(username) BETWEEN 1 AND 64),
  role TEXT NOT NULL CHECK (role IN ('edge', 'reader', 'downlink')),
  password TEXT NOT NULL,
  created_ms INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
)sql";

// The key of the edge's admin requests (edge/admin/admin_auth.hpp): 32 fresh random bytes.
RegistryStatus create_version_2_tables(SqliteDb& db, Rng& rng) {
  if (auto s = db.exec(kCreateAccounts); !s.ok()) return s;
  std::array<std::uint8_t, 32> key{};
  if (rng.fill(key) != Error::ok)
    return {RegistryErrc::crypto_failure, "the CSPRNG failed to draw the admin key"};
  RegistryStatement insert;
  RegistryStatus s = db.prepare("INSERT INTO admin_key (id, key) VALUES (1, ?1)", insert);
  if (s.ok()) s = insert.bind_blob(1, key);
  if (s.ok()) s = insert.run();
  secure_wipe(key);
  return s;
}

RegistryStatus migrate_from_version_1(SqliteDb& db, Rng& rng) {
  if (auto s = create_version_2_tables(db, rng); !s.ok()) return s;
  return db.exec("UPDATE deployment SET schema_version = 2 WHERE id = 1");
}

// Version 3: the deployment's uplink topics (uplink_topics.hpp). A registry from before keeps
// the paper's shared topics, which its devices publish on; a new one starts per-device.
constexpr const char* kAddUplinkTopics =
    "ALTER TABLE deployment ADD COLUMN uplink_topics TEXT NOT NULL DEFAULT 'shared' "
    "CHECK (uplink_topics IN ('shared', 'per-device'))";

RegistryStatus migrate_from_version_2(SqliteDb& db) {
  if (auto s = db.exec(kAddUplinkTopics); !s.ok()) return s;
  return db.exec("UPDATE deployment SET schema_version = 3 WHERE id = 1");
}

// Version 4: how `dsekp keys` reaches the broker's dynamic-security plugin (one row, or none
// for a deployment on the password and ACL files). The admin password is a secret, kept here
// beside every DEV_SECRET.
constexpr const char* kCreateDynamicSecurity = R"sql(
CREATE TABLE dynamic_security (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  host TEXT NOT NULL,
  port INTEGER NOT NULL CHECK (port BETWEEN 1 AND 65535),
  admin_user TEXT NOT NULL,
  admin_password TEXT NOT NULL,
  topic_prefix TEXT NOT NULL,
  psk_baseline INTEGER NOT NULL CHECK (psk_baseline IN (0, 1)),
  home_assistant INTEGER NOT NULL CHECK (home_assistant IN (0, 1)),
  synced_generation INTEGER NOT NULL DEFAULT 0 CHECK (synced_generation >= 0)
) STRICT;
)sql";

// Also version 4: the broker (HOST:PORT) each device was provisioned with, so that `keys show
// --reveal` prints the material the device holds. NULL for a device added before.
constexpr const char* kAddDeviceBroker = "ALTER TABLE devices ADD COLUMN broker TEXT";

RegistryStatus migrate_from_version_3(SqliteDb& db) {
  if (auto s = db.exec(kCreateDynamicSecurity); !s.ok()) return s;
  if (auto s = db.exec(kAddDeviceBroker); !s.ok()) return s;
  return db.exec("UPDATE deployment SET schema_version = 4 WHERE id = 1");
}

// Version 5: the republish base topic the dynamic-security grants cover (republish_topics.hpp);
// '' is the default {prefix}plain, which is what a version 4 registry granted. And the
// deployment's topic prefix (topic_prefix.hpp), '' for a registry of before: `dsekp keys
// broker-config --prefix` records it from now on.
constexpr const char* kAddRepublishTopic =
    "ALTER TABLE dynamic_security ADD COLUMN republish_topic TEXT NOT NULL DEFAULT ''";
constexpr const char* kAddTopicPrefix =
    "ALTER TABLE deployment ADD COLUMN topic_prefix TEXT NOT NULL DEFAULT ''";

RegistryStatus migrate_from_version_4(SqliteDb& db) {
  if (auto s = db.exec(kAddRepublishTopic); !s.ok()) return s;
  if (auto s = db.exec(kAddTopicPrefix); !s.ok()) return s;
  return db.exec("UPDATE deployment SET schema_version = 5 WHERE id = 1");
}

// Version 6: whether each device ratchets its secret (PROTOCOL.md 6.6); 0 for every device of
// before, which keeps the v1 behaviour.
constexpr const char* kAddRatchet =
    "ALTER TABLE devices ADD COLUMN ratchet INTEGER NOT NULL DEFAULT 0 CHECK (ratchet IN (0, 1))";

RegistryStatus migrate_from_version_5(SqliteDb& db) {
  if (auto s = db.exec(kAddRatchet); !s.ok()) return s;
  return db.exec("UPDATE deployment SET schema_version = 6 WHERE id = 1");
}

// Version 7: when a ratcheting device's provisioned secret was erased (PROTOCOL.md 6.6, edge
// rule 1); NULL while the registry holds it, which every device of before does.
constexpr const char* kAddSecretErased = "ALTER TABLE devices ADD COLUMN secret_erased_ms INTEGER";

RegistryStatus migrate_from_version_6(SqliteDb& db) {
  if (auto s = db.exec(kAddSecretErased); !s.ok()) return s;
  return db.exec("UPDATE deployment SET schema_version = 7 WHERE id = 1");
}

RegistryStatus count_tables(SqliteDb& db, std::int64_t& tables, bool& has_deployment) {
  if (auto s = db.query_int64("SELECT count(*) FROM sqlite_schema WHERE type = 'table'", tables);
      !s.ok())
    return s;
  std::int64_t n = 0;
  if (auto s = db.query_int64(
          "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'deployment'", n);
      !s.ok())
    return s;
  has_deployment = n == 1;
  return {};
}

RegistryStatus create(SqliteDb& db, Rng& rng, std::int64_t now_ms) {
  std::array<std::uint8_t, kEdgeSaltSize> salt{};
  std::array<std::uint8_t, kBrokerPasswordBytes> password{};
  if (rng.fill(salt) != Error::ok || rng.fill(password) != Error::ok)
    return {RegistryErrc::crypto_failure, "the CSPRNG failed to draw EDGE_SALT"};
  const std::string set_id = "PRAGMA application_id = " + std::to_string(kRegistryApplicationId);
  if (auto s = db.exec(set_id.c_str()); !s.ok()) return s;
  if (auto s = db.exec(kCreateTables); !s.ok()) return s;
  if (auto s = create_version_2_tables(db, rng); !s.ok()) return s;
  RegistryStatement insert;
  if (auto s = db.prepare(
          "INSERT INTO deployment (id, schema_version, edge_salt, generation, created_ms, "
          "edge_broker_password) VALUES (1, ?1, ?2, 0, ?3, ?4)",
          insert);
      !s.ok())
    return s;
  const std::string password_text = to_hex(password);
  secure_wipe(password);
  if (auto s = insert.bind_int64(1, kRegistrySchemaVersion); !s.ok()) return s;
  if (auto s = insert.bind_blob(2, salt); !s.ok()) return s;
  if (auto s = insert.bind_int64(3, now_ms); !s.ok()) return s;
  if (auto s = insert.bind_text(4, password_text); !s.ok()) return s;
  if (auto s = insert.run(); !s.ok()) return s;
  if (auto s = db.exec(kAddUplinkTopics); !s.ok()) return s;
  if (auto s = db.exec(kCreateDynamicSecurity); !s.ok()) return s;
  if (auto s = db.exec(kAddDeviceBroker); !s.ok()) return s;
  if (auto s = db.exec(kAddRepublishTopic); !s.ok()) return s;
  if (auto s = db.exec(kAddTopicPrefix); !s.ok()) return s;
  if (auto s = db.exec(kAddRatchet); !s.ok()) return s;
  if (auto s = db.exec(kAddSecretErased); !s.ok()) return s;
  return db.exec("UPDATE deployment SET uplink_topics = 'per-device' WHERE id = 1");
}

}  // namespace

RegistryStatus ensure_registry_schema(SqliteDb& db, bool may_create, Rng& rng,
                                      std::int64_t now_ms) {
  SqliteTransaction tx(db);
  if (auto s = tx.begin(); !s.ok()) return s;
  std::int64_t tables = 0;
  bool has_deployment = false;
  if (auto s = count_tables(db, tables, has_deployment); !s.ok()) return s;
  std::int64_t app_id = 0;
  if (auto s = db.query_int64("PRAGMA application_id", app_id); !s.ok()) return s;

  if (tables == 0 && app_id == 0) {
    if (!may_create)
      return {RegistryErrc::not_a_registry, "the database is empty (not initialised)"};
    if (auto s = create(db, rng, now_ms); !s.ok()) return s;
    return tx.commit();
  }
  if (app_id != kRegistryApplicationId || !has_deployment)
    return {RegistryErrc::not_a_registry, "not a DSEKP device registry (another SQLite database)"};
  std::int64_t version = 0;
  if (auto s = db.query_int64("SELECT schema_version FROM deployment WHERE id = 1", version);
      !s.ok())
    return s;
  if (version == 1) {
    if (auto s = migrate_from_version_1(db, rng); !s.ok()) return s;
    version = 2;
  }
  if (version == 2) {
    if (auto s = migrate_from_version_2(db); !s.ok()) return s;
    version = 3;
  }
  if (version == 3) {
    if (auto s = migrate_from_version_3(db); !s.ok()) return s;
    version = 4;
  }
  if (version == 4) {
    if (auto s = migrate_from_version_4(db); !s.ok()) return s;
    version = 5;
  }
  if (version == 5) {
    if (auto s = migrate_from_version_5(db); !s.ok()) return s;
    version = 6;
  }
  if (version == 6) {
    if (auto s = migrate_from_version_6(db); !s.ok()) return s;
    version = 7;
  }
  if (version != kRegistrySchemaVersion)
    return {RegistryErrc::not_a_registry, "registry schema version " + std::to_string(version) +
                                              " is not supported (this " + "build reads version " +
                                              std::to_string(kRegistrySchemaVersion) + ")"};
  return tx.commit();
}

}  // namespace dsekp::edge
