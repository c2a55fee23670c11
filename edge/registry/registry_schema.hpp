// The registry's SQL schema (version 2; a version 1 registry is upgraded when opened) and the
// one-time initialisation of a new database.
//
// A database is recognised as a DSEKP registry by its SQLite application_id ("DSKP") and the
// schema_version in its deployment row; any other SQLite file is refused rather than modified.
#pragma once

#include <cstdint>

#include "dsekp/crypto.hpp"
#include "registry_status.hpp"
#include "sqlite_db.hpp"

namespace dsekp::edge {

/// PRAGMA application_id of a registry: the ASCII bytes "DSKP".
inline constexpr std::int64_t kRegistryApplicationId = 0x44534B50;

/// Makes sure `db` holds a registry of the current schema (upgrading version 1 in place). An empty
/// database is initialised (tables, a fresh EDGE_SALT and edge broker password from `rng`) when
/// `may_create`; otherwise it is not_a_registry. Runs in its own write transaction, so two
/// processes creating the same registry at once end with one schema and one EDGE_SALT.
RegistryStatus ensure_registry_schema(SqliteDb& db, bool may_create, Rng& rng, std::int64_t now_ms);

}  // namespace dsekp::edge
