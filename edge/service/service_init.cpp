// EdgeService: an INIT on {prefix}dsekp/init (PROTOCOL.md 6.2), answered with an ACK only after
// the new pending session is committed.
#include <vector>

#include "dsekp/codec.hpp"
#include "service_internal.hpp"
#include "write_unit.hpp"

namespace dsekp::edge {
namespace {

using service_detail::fail;
using service_detail::fail_store;
using service_detail::reject;

}  // namespace

void EdgeService::on_init(std::string_view topic_dev_id, ByteView payload, std::uint64_t now_ms,
                          HandleResult& r) {
  InitFrame init;
  if (const Error e = decode_init(payload, init); e != Error::ok) return reject(r, e);
  r.dev_id = init.dev_id.str();
  if (service_detail::from_another_device(topic_dev_id, init.dev_id, r)) return;
  DeviceContext ctx;
  if (!load_device(init.dev_id, ctx, r)) return;
  // Key rotation: sessions derived from the old DEV_SECRET must go. The new state replaces the
  // stale one in the same transaction, so the INIT is judged as a device's first (its replay
  // cache and newest `t` belonged to the old secret, whose INITs no longer verify anyway).
  if (ctx.stale) ctx.state = EdgeDeviceState{};
  // Ratchet mode (PROTOCOL.md 6.6): the state holds the device's current secret, and a state
  // without one starts from the provisioned secret, unless the registry erased it (then the
  // state that held the only copy is gone: nothing can verify the device any more).
  if (current_secret(ctx) == nullptr)
    return fail(r, EdgeReason::secret_erased,
                "its provisioned secret was erased and no stored state holds its current one: "
                "re-provision it (dsekp keys rotate)");
  if (ctx.credentials.ratchet &&
      !enable_ratchet(ctx.state, init.dev_id, ctx.credentials.dev_secret))
    return reject(r, Error::dev_id_mismatch);

  InitOutcome outcome;
  if (const Error e = protocol_->handle_init(init, ctx.credentials.dev_secret, ctx.state, now_ms,
                                             rng_, outcome);
      e != Error::ok) {
    return reject(r, e);
  }
  if (outcome.retransmission && !ack_resends_.may_send(init.dev_id.str(), now_ms))
    return reject(r, Error::rate_limited);  // a replayed pending INIT, or a device too eager

  // Answer in the INIT's encoding: the device evidently speaks it.
  std::vector<std::uint8_t> ack(kMaxFrameSize);
  std::size_t ack_size = 0;
  if (const Error e = encode(outcome.ack, detect_encoding(payload), ack, ack_size);
      e != Error::ok) {
    return fail(r, EdgeReason::internal_error, std::string("encode ACK: ") + error_name(e));
  }
  ack.resize(ack_size);

  // A retransmission re-sends the stored ACK; the stored state already holds it.
  if (!outcome.retransmission) {
    // Downlinks go out in the encoding the device's newest INIT used.
    ctx.state.compact_replies = detect_encoding(payload) == Encoding::compact;
    WriteUnit unit(store_, nullptr);
    if (!unit.status().ok()) return fail_store(r, "begin", unit.status());
    if (!save_state(init.dev_id, ctx, /*record=*/true, now_ms, r)) return;
    if (!commit(unit, r)) return;
  }

  ack_resends_.sent(init.dev_id.str(), now_ms);
  r.handshake_accepted = !outcome.retransmission;
  r.ack_retransmitted = outcome.retransmission;
  r.stale_state_dropped = ctx.stale;
  r.ratchet_steps = outcome.ratchet_steps;
  r.publishes.push_back(Publish{topics_.ack(init.dev_id.str()), std::move(ack), 1});
}

}  // namespace dsekp::edge
