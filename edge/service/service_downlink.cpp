// EdgeService: a downlink frame (PROTOCOL.md 6.4), returned for publishing only after the state
// with its consumed seq is committed, so a seq (and so a nonce) is never used twice, not even
// across a crash (6.5).
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

void EdgeService::on_downlink(std::string_view dev_id_text, ByteView plaintext,
                              std::uint64_t now_ms, HandleResult& r) {
  DevId dev_id;
  if (const Error e = dev_id.assign(dev_id_text); e != Error::ok) return reject(r, e);
  if (plaintext.size() > kMaxPayloadSize) return reject(r, Error::payload_too_large);
  DeviceContext ctx;
  if (!load_device(dev_id, ctx, r)) return;
  if (ctx.stale) {
    if (drop_stale(dev_id, ctx, r)) reject(r, Error::no_session);
    return;
  }

  DataFrame frame;
  if (const Error e = protocol_->seal_downlink(ctx.state, plaintext, now_ms, frame);
      e != Error::ok) {
    return reject(r, e);
  }
  std::vector<std::uint8_t> wire(max_encoded_data_size(plaintext.size()));
  std::size_t size = 0;
  if (const Error e = encode(frame, config_.downlink_encoding, wire, size); e != Error::ok) {
    return fail(r, EdgeReason::internal_error, std::string("encode downlink: ") + error_name(e));
  }
  wire.resize(size);

  WriteUnit unit(store_, nullptr);
  if (!unit.status().ok()) return fail_store(r, "begin", unit.status());
  if (!save_state(dev_id, ctx, /*record=*/false, now_ms, r)) return;
  if (!commit(unit, r)) return;
  r.publishes.push_back(Publish{topics_.downlink(dev_id.str()), std::move(wire), 1});
  r.downlink_seq = frame.seq;
}

}  // namespace dsekp::edge
