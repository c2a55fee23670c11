// Where accepted frames go: the interface EdgeService hands each accepted frame's row to, inside
// the store transaction that also saves the device state (session_store.hpp says why the two
// must commit as one unit: otherwise a crash between them loses a reading or accepts it twice).
//
// Call sequence for one unit of work (one received message):
//   store.begin(); save state; sink.write(row)...; sink.before_commit(); store.commit(); then
//   committed() or rolled_back() (commit_with_sinks() in write_unit.hpp is that sequence). A
//   rolled-back unit may also end without any write() (e.g. the state save failed), and
//   rolled_back() is then still called.
// So a sink that stores rows in the session store's SQLite database stages them in write() and
// inserts them in before_commit(), on that same connection (SqliteSessionStore::connection()),
// so they commit or vanish with the state; it must check that a transaction is open
// (sqlite3_get_autocommit() == 0) before writing, because SQLite ends a transaction by itself
// after some errors. Inserting them only then keeps every message's savepoint free of SQL
// statements (sqlite_session_store.hpp). A sink with side effects outside the database stages
// its rows in write() and acts on them only in committed() (an MQTT republish), or acts in
// before_commit() only if it can undo that in rolled_back() and at start-up (the CSV logs:
// server_csv_sink.hpp).
//
// In a batch (EdgeService::begin_batch, the daemon's default) one unit holds several messages:
//   store.begin(); per message: sink.savepoint(); save; write(row)...; then either the message
//   is kept (nothing is said to the sink) or undone (rolled_back_to_savepoint(): forget the rows
//   written since savepoint()); at the end before_commit(), store.commit() and committed() for
//   every kept row, in the order written, or rolled_back() for all of them.
// A sink that stages rows drops the ones staged after savepoint().
//
// Called from the one thread that runs EdgeService (under its lock).
#pragma once

#include <string>
#include <string_view>

#include "accepted_frame.hpp"

namespace dsekp::edge {

class SinkWriter {
 public:
  virtual ~SinkWriter() = default;

  /// Takes one row into the open unit. false (or an exception) means it could not: the whole
  /// unit is rolled back and the message reported as sink_failure.
  [[nodiscard]] virtual bool write(const AcceptedFrame& row) = 0;
  /// The unit is about to commit: a sink in the store's database inserts its staged rows now,
  /// in the open transaction. false: the unit is rolled back instead (rolled_back() follows).
  [[nodiscard]] virtual bool before_commit() noexcept { return true; }
  /// Why the last before_commit() returned false, for the log and the fail-stop line (the file
  /// or table and what the system said); empty if the sink cannot say.
  [[nodiscard]] virtual std::string refusal() const { return {}; }
  /// The unit holding the rows written since the last committed()/rolled_back() is durable.
  virtual void committed() noexcept {}
  /// That unit was rolled back: forget its rows.
  virtual void rolled_back() noexcept {}
  /// A message of a batch begins: rows written from now on may be undone alone.
  virtual void savepoint() noexcept {}
  /// That message was undone: forget the rows written since savepoint(); the unit goes on.
  virtual void rolled_back_to_savepoint() noexcept {}
};

/// `to` becomes `text`, or empty if there is no memory for it (for the noexcept paths above).
inline void set_refusal(std::string& to, std::string_view text) noexcept {
  try {
    to.assign(text);
  } catch (...) {
    to.clear();
  }
}

}  // namespace dsekp::edge
