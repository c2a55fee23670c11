// The edge's device registry: who may talk to the edge, with which long-term keys, on one SQLite
// database shared by the edge daemon and `dsekp keys`.
//
// Contents (schema version 7, WAL journal, file mode 0600; older versions are upgraded on open):
//   deployment  one row: EDGE_SALT (32 random bytes, drawn once when the database is created and
//               never changed: every provisioned device holds it), the schema version, the
//               registry's change counter, the edge's own broker account, the devices' uplink
//               topics (uplink_topics.hpp: per-device for a new registry, shared for an older one).
//   devices     dev_id (validated with dsekp::DevId), DEV_SECRET (32 bytes), PSK_KEY (16 bytes,
//               the baseline's key), the device's broker password, created_ms, rotated_ms, its
//               generation, (schema 4) the broker it was provisioned with, (schema 6)
//               whether it ratchets its secret (PROTOCOL.md 6.6) and (schema 7) when that
//               device's provisioned secret was erased (then DEV_SECRET holds zeros: the
//               edge's state holds the device's current secret, the only one there is).
//   removed_devices  a tombstone per removed dev_id with the generation of its removal, so that a
//               running edge can learn about removals (see "Live changes").
//   admin_key   the key of the edge's admin requests (`dsekp edge send`), 32 random bytes.
//   broker_accounts  broker logins that are not devices, each with its role (AccountRole): more
//               edges (one account each: the broker binds client ids to user names), telemetry
//               readers of the republished readings, senders of downlink requests. The
//               deployment row's edge user is the default edge account.
//   dynamic_security  (schema 4) none, or one row: the broker whose dynamic-security plugin
//               `dsekp keys` changes at once on every add, rotate and remove, the plugin admin's
//               login (secret) and the deployment's topic prefix and PSK baseline switch.
//
// Secrets at rest: the database holds every DEV_SECRET, so it is created 0600 and refused if it
// is open to group or others (secure_file.hpp); SQLite's secure_delete is on, so removed and
// rotated secrets are overwritten in the database file rather than left in free pages (older
// page images can remain in the -wal file, also 0600, until a checkpoint recycles it). In
// memory, secrets are read straight into dsekp::DevSecret / PskKey, which wipe themselves;
// SQLite's own page cache and the CLI's printed strings are not wiped.
//
// Broker passwords: each device gets a random broker password (16 random bytes as 32 hex chars)
// for its MQTT login as user `dev_id`. It is stored here in the clear, unlike what a password
// database would do, because `dsekp keys broker-config` must be able to regenerate the broker's
// password file (with fresh salts) at any time; the file already holds every DEV_SECRET, which
// is worth more than the broker password. The edge's own broker password is stored the same way.
//
// Live changes (a running edge sees adds, removes and rotations without a restart):
//   * Every add, remove and rotate takes the next value of the registry's change counter (a
//     strictly increasing 64-bit "generation", never reused, also across remove + re-add of the
//     same dev_id) and stamps it on the device row, or on its tombstone for a remove, in the same
//     transaction as the change.
//   * find() reads SQLite on every call (a primary-key lookup through a prepared statement,
//     about 1.5 us on the development machine), so a lookup always sees the latest committed
//     state: a device added by the CLI is found by the very next INIT, a removed one is
//     unknown_device.
//   * The edge records the generation of the credentials each device's sessions were established
//     with (edge/service/credential_generations.hpp, in the store's database and transaction). A
//     session is stale, and its state must be dropped, when find() for its dev_id returns not_found
//     or a different generation: the device was removed, or rotated (its DEV_SECRET and PSK key
//     replaced; the device must be re-provisioned and start a new handshake with the new secret,
//     and keys derived from the old secret must not be used again).
//   * EdgeService checks that generation on every message. Alternatively an edge can poll:
//   `generation()` is one single-row read; when it
//     exceeds the value the edge last saw, `changes_since(last)` lists exactly the dev_ids added,
//     rotated or removed since, with their new generations.
//   We use this counter rather than SQLite's data version to name changes because the data
//   version cannot say which devices changed (change_mark() adds it, to notice a file restored
//   to an older generation).
//
// Concurrency: any number of processes may open the same file (WAL: readers never block the
// writer). Writers serialise on BEGIN IMMEDIATE with a 5 s busy timeout. One DeviceRegistry is
// one SQLite connection with cached statements: use it from one thread at a time.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "crypto/openssl/openssl_crypto.hpp"
#include "dsekp/spec.hpp"
#include "registry_status.hpp"
#include "sqlite_db.hpp"
#include "uplink_topics.hpp"

namespace dsekp::edge {

inline constexpr std::int64_t kRegistrySchemaVersion = 7;
inline constexpr std::size_t kEdgeSaltSize = kEdgeSaltMaxSize;
/// Random bytes behind each broker password (printed as twice as many hex characters).
inline constexpr std::size_t kBrokerPasswordBytes = 16;

/// What the edge needs to run the protocol with one device.
struct DeviceCredentials {
  DevId dev_id;
  DevSecret dev_secret;
  PskKey psk_key;
  /// Generation of these credentials (see "Live changes"); changes on rotate and on re-add.
  std::uint64_t generation = 0;
  /// The device ratchets its secret (PROTOCOL.md 6.6): dev_secret is the provisioned one, and
  /// the edge's state holds the current one once it has seen the device.
  bool ratchet = false;
  /// Ratchet only: the provisioned secret was erased once a state past it was durable
  /// (erase_provisioned_secret()); dev_secret is then all zeros and must not be used.
  bool secret_erased = false;
};

/// Everything a device must be provisioned with (`keys add`, `keys rotate`, `keys show --reveal`).
struct DeviceMaterial {
  DeviceCredentials credentials;
  EdgeSalt edge_salt;
  std::string broker_username;  // equals dev_id
  std::string broker_password;
  UplinkTopics uplink_topics = UplinkTopics::per_device;  // the deployment's, for the material
  std::string topic_prefix;  // the deployment's (topic_prefix.hpp), in front of every topic
  /// HOST:PORT the device was provisioned with (empty: not recorded, a device of before).
  std::string broker;
};

/// Public facts about a device: no secrets.
struct DeviceInfo {
  std::string dev_id;
  std::int64_t created_ms = 0;
  std::optional<std::int64_t> rotated_ms;  // unset until the first rotation
  std::uint64_t generation = 0;
  bool ratchet = false;                          // the device ratchets its secret (PROTOCOL.md 6.6)
  std::optional<std::int64_t> secret_erased_ms;  // when its provisioned secret was erased
};

/// A broker login (device or edge) for the Mosquitto password file.
struct BrokerAccount {
  std::string username;
  std::string password;
};

/// What a broker account that is not a device may do (broker_config.hpp has the ACL of each).
enum class AccountRole : std::uint8_t {
  edge,      // an edge daemon: reads device traffic, answers on every device's topics
  reader,    // reads the readings the edge republishes in clear (`dsekp edge --republish`)
  downlink,  // `dsekp edge send`: publishes downlink requests, reads their results
};

/// "edge", "reader", "downlink".
[[nodiscard]] const char* account_role_name(AccountRole role) noexcept;
[[nodiscard]] bool parse_account_role(std::string_view text, AccountRole& out) noexcept;

struct ServiceAccount {
  BrokerAccount login;
  AccountRole role = AccountRole::edge;
};

/// How `dsekp keys` reaches Mosquitto's dynamic-security plugin (edge/broker_admin/).
struct DynamicSecuritySettings {
  std::string host;
  std::uint16_t port = 1883;
  BrokerAccount admin;        // a plugin client with the admin role (`mosquitto_ctrl dynsec init`)
  std::string topic_prefix;   // the deployment's, as given to `dsekp edge --prefix`
  bool psk_baseline = false;  // grant the paper's psk/data topic
  bool home_assistant = false;  // grant the discovery topics (broker_grants.hpp)
  std::string republish_topic;  // `dsekp edge --republish-topic` ("": {prefix}plain)
  /// The registry generation the plugin was last fully in line with: a device changed after it
  /// (a rotation whose own sync failed) gets its password set by the next sync.
  std::uint64_t synced_generation = 0;
};

/// A device whose secrets were made elsewhere (`dsekp keys import`).
struct ImportedDevice {
  DevId dev_id;
  DevSecret dev_secret;
  std::optional<PskKey> psk_key;  // unset: drawn fresh
  std::string broker_password;    // empty: drawn fresh
  std::string broker;             // HOST:PORT it connects to; empty: not recorded
  bool ratchet = false;           // it ratchets its secret (PROTOCOL.md 6.6)
};

/// One device that changed after a given generation.
struct RegistryChange {
  std::string dev_id;
  std::uint64_t generation = 0;
  bool removed = false;  // false: added or rotated (find() returns the new credentials)
};

/// Marks the registry's state: equal marks, read by the same DeviceRegistry, mean nothing the
/// edge reads changed in between. The generation moves with every add, rotate and remove (by
/// any connection); SQLite's data version of the file with any commit, by this connection or
/// another (for instance a registry restored in place, through SQLite, from an older copy whose
/// generation may repeat; a file copied over a live database behind SQLite's back is seen by
/// neither).
struct RegistryChangeMark {
  std::uint64_t generation = 0;
  std::uint32_t data_version = 0;
  friend bool operator==(const RegistryChangeMark&, const RegistryChangeMark&) = default;
};

/// The registry's changes after a given generation, oldest first.
struct ChangeSet {
  std::uint64_t generation = 0;  // the registry's generation when read: pass it next time
  std::vector<RegistryChange> changes;
};

enum class OpenMode {
  existing_only,      // the edge and the read/modify commands: a missing file is an error
  create_if_missing,  // `keys add`: creates the file (0600), the schema and EDGE_SALT
};

class DeviceRegistry {
 public:
  /// Opens (or creates) the registry at `path`. Refuses a file open to group/others
  /// (insecure_file), an SQLite file that is not a DSEKP registry or has another schema version
  /// (not_a_registry), and a missing file with existing_only (not_found).
  static RegistryStatus open(const std::string& path, OpenMode mode,
                             std::unique_ptr<DeviceRegistry>& out);

  DeviceRegistry(const DeviceRegistry&) = delete;
  DeviceRegistry& operator=(const DeviceRegistry&) = delete;
  ~DeviceRegistry();

  /// The deployment's EDGE_SALT (read once at open; it never changes).
  [[nodiscard]] const EdgeSalt& edge_salt() const noexcept { return edge_salt_; }
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

  /// Registers `dev_id` with a fresh DEV_SECRET, PSK key and broker password, and returns what
  /// the device must be provisioned with; `broker` (HOST:PORT) is recorded with it, and whether
  /// the device ratchets its secret (PROTOCOL.md 6.6).
  /// invalid_dev_id, already_exists, name_conflict (the edge's broker user name).
  RegistryStatus add(std::string_view dev_id, DeviceMaterial& out, std::string_view broker = {},
                     bool ratchet = false);
  /// Registers devices provisioned elsewhere, all or none (one transaction): each dev_id must be
  /// new (already_exists) and not an account (name_conflict), and the devices must hold this
  /// registry's EDGE_SALT (the caller checks: adopt_edge_salt). Returns each one's material.
  RegistryStatus import_devices(const std::vector<ImportedDevice>& devices,
                                std::vector<DeviceMaterial>& out);
  /// Replaces EDGE_SALT, only in a registry that has never held a device (generation 0): a
  /// registry created to take over devices provisioned by another one (`keys import`) takes
  /// theirs. invalid_argument otherwise: once a device holds the salt it never changes.
  RegistryStatus adopt_edge_salt(const EdgeSalt& salt);
  /// Deletes the device (its secrets are overwritten in the file) and leaves a tombstone.
  RegistryStatus remove(std::string_view dev_id);
  /// Replaces DEV_SECRET, PSK key and broker password with fresh ones and bumps the generation.
  /// The broker password changes too because rotation is the answer to a leaked device: the
  /// device has to be re-provisioned anyway, and the broker files regenerated.
  /// An empty `broker` keeps the recorded one; an unset `ratchet` the recorded mode (changing
  /// the mode needs new material on the device, which a rotation is).
  RegistryStatus rotate(std::string_view dev_id, DeviceMaterial& out, std::string_view broker = {},
                        std::optional<bool> ratchet = std::nullopt);

  /// The edge's lookup: current credentials of `dev_id`, or not_found. Always reads the latest
  /// committed state (see "Live changes").
  RegistryStatus find(std::string_view dev_id, DeviceCredentials& out);
  /// Everything the device holds (for `keys show --reveal`); secret_erased for a ratcheting
  /// device whose provisioned secret is gone.
  RegistryStatus material(std::string_view dev_id, DeviceMaterial& out);
  /// Overwrites the provisioned secret of a ratcheting device with zeros, if the device still
  /// has `generation` (a rotation in between keeps the new secret) and the secret is still
  /// there; `erased` says whether this call erased it. The caller must have made a state of
  /// the device past epoch 0 durable first: from then on that state holds the only secret
  /// (PROTOCOL.md 6.6, edge rule 1). Does not wait for a lock (busy: database, try later).
  /// Until checkpoint_wal() completes, the files may still hold page images of the secret.
  RegistryStatus erase_provisioned_secret(std::string_view dev_id, std::uint64_t generation,
                                          bool& erased);
  /// A truncating checkpoint, without waiting for readers; `complete` when the database file
  /// holds every page and the -wal file is empty.
  RegistryStatus checkpoint_wal(bool& complete);
  RegistryStatus info(std::string_view dev_id, DeviceInfo& out);
  /// All devices, ordered by dev_id.
  RegistryStatus list(std::vector<DeviceInfo>& out);

  /// The registry's current change counter (0 for a registry that never changed).
  RegistryStatus generation(std::uint64_t& out);
  /// The current mark (one single-row read): what caches of find() are checked against.
  RegistryStatus change_mark(RegistryChangeMark& out);
  /// Devices added, rotated or removed after generation `since`.
  RegistryStatus changes_since(std::uint64_t since, ChangeSet& out);

  /// Broker logins of every device, ordered by dev_id.
  RegistryStatus device_broker_accounts(std::vector<BrokerAccount>& out);
  /// Records `username` as the edge's broker user (name_conflict if it is a registered dev_id;
  /// invalid_name unless it is 1-64 bytes of [A-Za-z0-9._-]) and returns the edge's account.
  RegistryStatus set_edge_broker_user(std::string_view username, BrokerAccount& out);
  /// The edge's broker account; not_found until set_edge_broker_user() was called once.
  RegistryStatus edge_broker_account(BrokerAccount& out);

  /// The topics the deployment's devices publish on (uplink_topics.hpp).
  RegistryStatus uplink_topics(UplinkTopics& out);
  RegistryStatus set_uplink_topics(UplinkTopics topics);
  /// The deployment's topic prefix (topic_prefix.hpp; "" for none).
  RegistryStatus topic_prefix(std::string& out);
  /// invalid_argument (with the reason) for a prefix topic_prefix_problem() refuses.
  RegistryStatus set_topic_prefix(std::string_view prefix);

  /// The key the edge checks admin requests with (edge/admin/admin_auth.hpp): 32 random bytes
  /// drawn when the registry was created (or upgraded to schema 2). Secret.
  RegistryStatus admin_key(std::array<std::uint8_t, 32>& out);

  /// Adds a broker account that is not a device, with a fresh random password. The name has
  /// the dev_id alphabet and must not be a dev_id, the default edge user or another account
  /// (name_conflict); adding an account that exists with the same role returns it unchanged.
  RegistryStatus add_account(std::string_view username, AccountRole role, ServiceAccount& out);
  /// Removes an account added with add_account() (not_found if there is none).
  RegistryStatus remove_account(std::string_view username);
  /// One account by name: the default edge user (role edge) or one of add_account().
  RegistryStatus account(std::string_view username, ServiceAccount& out);
  /// Every account that is not a device: the default edge user first, then the others by name.
  RegistryStatus accounts(std::vector<ServiceAccount>& out);

  /// The broker whose dynamic-security plugin holds the accounts; not_found when the
  /// deployment uses the password and ACL files instead.
  RegistryStatus dynamic_security(DynamicSecuritySettings& out);
  RegistryStatus set_dynamic_security(const DynamicSecuritySettings& settings);
  /// Records that the plugin is in line with the registry as of `generation` (never backwards).
  RegistryStatus set_dynamic_security_synced(std::uint64_t generation);
  /// Back to the files: `dsekp keys` no longer changes the broker itself.
  RegistryStatus clear_dynamic_security();

 private:
  DeviceRegistry() = default;
  RegistryStatus initialize(bool fresh_file);
  RegistryStatus create_schema();
  RegistryStatus check_schema();
  RegistryStatus load_edge_salt();
  RegistryStatus next_generation(std::uint64_t& out);
  RegistryStatus read_generation(std::uint64_t& generation, std::uint32_t* data_version);
  RegistryStatus draw_secrets(DeviceMaterial& out);
  RegistryStatus store_device(const DeviceMaterial& material, bool is_rotation);
  /// In the caller's transaction: stores a device not registered yet (already_exists, or
  /// name_conflict with an account) under the next generation, and drops its tombstone.
  RegistryStatus insert_new_device(DeviceMaterial& material);

  std::string path_;
  SqliteDb db_;
  RegistryStatement find_stmt_;        // kept prepared: the edge's per-INIT lookup
  RegistryStatement generation_stmt_;  // kept prepared: generation() and change_mark()
  EdgeSalt edge_salt_;
  OpenSslRng rng_;
};

}  // namespace dsekp::edge
