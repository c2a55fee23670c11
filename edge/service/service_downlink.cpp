// EdgeService: a downlink frame (PROTOCOL.md 6.4), returned for publishing only after its seq is
// in the downlink journal (fsync) and the state with the consumed seq is committed, so a seq
// (and so a nonce) is never used twice: not across a crash, a power loss, nor a store restored
// from an older copy (6.5).
#include <vector>

#include "dsekp/codec.hpp"
#include "edge/store/session_tag.hpp"
#include "service_internal.hpp"
#include "write_unit.hpp"

namespace dsekp::edge {
namespace {

using service_detail::fail;
using service_detail::fail_store;
using service_detail::reject;

// Names a session in the downlink journal by its downlink keys.
constexpr std::string_view kDownlinkJournalTagLabel = "dsekp downlink journal tag v1";

}  // namespace

void EdgeService::on_downlink(std::string_view dev_id_text, ByteView plaintext,
                              std::uint64_t now_ms, HandleResult& r) {
  DevId dev_id;
  if (const Error e = dev_id.assign(dev_id_text); e != Error::ok) return reject(r, e);
  r.dev_id = dev_id.str();
  if (plaintext.size() > kMaxPayloadSize) return reject(r, Error::payload_too_large);
  DeviceContext ctx;
  if (!load_device(dev_id, ctx, r)) return;
  if (ctx.stale) {
    if (drop_stale(dev_id, ctx, r)) reject(r, Error::no_session);
    return;
  }

  // The journal knows every seq this edge ever used under the session, whatever the store
  // forgot: seal at the larger of the two (downlink_journal.hpp).
  EdgeSession* session = downlink_session(ctx.state);
  if (session == nullptr) return reject(r, Error::no_session);
  std::string tag;
  if (downlink_journal_ != nullptr) {
    tag = session_tag(kDownlinkJournalTagLabel, session->keys.down);
    if (tag.empty()) return fail(r, EdgeReason::internal_error, "cannot compute the session tag");
    const JournalFloor floor = downlink_journal_->floor(dev_id.str(), tag, session->created_ms);
    if (floor.forgotten) {
      r.detail = "the downlink journal may have forgotten this session: the device must rekey";
      return reject(r, Error::no_session);
    }
    if (floor.next_seq > session->downlink_seq) {
      r.downlink_seq_restored = true;
      r.detail = std::string(dev_id.str()) + ": the stored downlink seq " +
                 std::to_string(session->downlink_seq) + " was behind the journal's " +
                 std::to_string(floor.next_seq) + " (the store lost writes or was restored)";
      session->downlink_seq = floor.next_seq;
    }
  }
  // Several edges on one store seal in disjoint lanes: what another edge sealed is in no
  // journal of ours, but never in our lane either.
  session->downlink_seq = config_.downlink_lane.first_at_or_after(session->downlink_seq);
  DataFrame frame;
  if (const Error e = protocol_->seal_downlink(ctx.state, plaintext, now_ms, frame);
      e != Error::ok) {
    return reject(r, e);
  }
  std::vector<std::uint8_t> wire(max_encoded_data_size(plaintext.size()));
  std::size_t size = 0;
  // The device's own encoding: that of its newest accepted INIT (PROTOCOL.md section 2).
  const Encoding encoding = ctx.state.compact_replies ? Encoding::compact : Encoding::json;
  if (const Error e = encode(frame, encoding, wire, size); e != Error::ok) {
    return fail(r, EdgeReason::internal_error, std::string("encode downlink: ") + error_name(e));
  }
  wire.resize(size);

  if (downlink_journal_ != nullptr) {
    std::string error;
    if (!downlink_journal_->record(dev_id.str(), tag, std::uint64_t{frame.seq} + 1,
                                   session->created_ms, error))
      return fail(r, EdgeReason::store_failure, error);
  }
  WriteUnit unit(store_, nullptr);
  if (!unit.status().ok()) return fail_store(r, "begin", unit.status());
  if (!save_state(dev_id, ctx, /*record=*/false, now_ms, r)) return;
  if (!commit(unit, r)) return;
  r.publishes.push_back(Publish{topics_.downlink(dev_id.str()), std::move(wire), 1});
  r.downlink_seq = frame.seq;
}

}  // namespace dsekp::edge
