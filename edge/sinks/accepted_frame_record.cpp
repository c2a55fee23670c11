// AcceptedFrame records (see accepted_frame_record.hpp).
#include "edge/sinks/accepted_frame_record.hpp"

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "core/base64.hpp"

namespace dsekp::edge::sinks {
namespace {

using nlohmann::json;

constexpr std::uint64_t kVersion = 1;
constexpr std::size_t kFields = 15;

// A field that must hold canonical base64: the server CSV writes these columns unquoted
// (server_csv_format.cpp), so a damaged record must not reach it with anything else.
bool canonical_base64(const json& j) {
  if (!j.is_string()) return false;
  const std::string& text = j.get_ref<const std::string&>();
  std::vector<std::uint8_t> bytes(text.size() / 4 * 3 + 3);
  std::size_t written = 0;
  return base64::decode(text, bytes, written) == Error::ok;
}

bool get_u64(const json& j, std::uint64_t max, std::uint64_t& out) {
  if (!j.is_number_unsigned()) return false;
  out = j.get<std::uint64_t>();
  return out <= max;
}

}  // namespace

std::string encode_accepted_frame(const AcceptedFrame& row) {
  const json record = json::array(
      {kVersion, mode_name(row.mode), row.encoding == Encoding::json ? "json" : "compact",
       row.dev_id, row.sessctr, row.seq, row.sendts_ms, row.recvts_ms, row.recvts_us,
       row.latency_ms, row.ciphertext_b64, row.iv_b64, row.tag_b64,
       json::binary(std::vector<std::uint8_t>(row.plaintext)), row.payload_size});
  const std::vector<std::uint8_t> bytes = json::to_msgpack(record);
  return {bytes.begin(), bytes.end()};
}

bool decode_accepted_frame(std::string_view record, AcceptedFrame& row, std::string& error) {
  // Parsed without exceptions: a malformed record is a discarded value, not a throw.
  const json j = json::from_msgpack(record.begin(), record.end(), true, false);
  if (j.is_discarded()) {
    error = "not a MessagePack value";
    return false;
  }
  if (!j.is_array() || j.size() != kFields) {
    error = "not an array of " + std::to_string(kFields) + " fields";
    return false;
  }
  std::uint64_t version = 0;
  if (!get_u64(j[0], std::numeric_limits<std::uint64_t>::max(), version) || version != kVersion) {
    error = "unknown record version";
    return false;
  }
  AcceptedFrame r;
  const auto fail = [&error](const char* field) {
    error = std::string("bad field ") + field;
    return false;
  };
  if (!j[1].is_string()) return fail("mode");
  const std::string& mode = j[1].get_ref<const std::string&>();
  const std::optional<Mode> parsed_mode = parse_mode(mode);
  if (!parsed_mode) return fail("mode");
  r.mode = *parsed_mode;
  if (j[2] == "json") {
    r.encoding = Encoding::json;
  } else if (j[2] == "compact") {
    r.encoding = Encoding::compact;
  } else {
    return fail("encoding");
  }
  if (!j[3].is_string()) return fail("dev_id");
  r.dev_id = j[3].get<std::string>();
  std::uint64_t v = 0;
  if (!get_u64(j[4], std::numeric_limits<std::uint16_t>::max(), v)) return fail("sessctr");
  r.sessctr = static_cast<std::uint16_t>(v);
  if (!get_u64(j[5], std::numeric_limits<std::uint32_t>::max(), v)) return fail("seq");
  r.seq = static_cast<std::uint32_t>(v);
  const std::uint64_t any = std::numeric_limits<std::uint64_t>::max();
  if (!get_u64(j[6], any, r.sendts_ms)) return fail("sendts_ms");
  if (!get_u64(j[7], any, r.recvts_ms)) return fail("recvts_ms");
  if (!get_u64(j[8], any, r.recvts_us)) return fail("recvts_us");
  if (!j[9].is_number_integer()) return fail("latency_ms");
  r.latency_ms = j[9].get<std::int64_t>();
  if (!canonical_base64(j[10]) || !canonical_base64(j[11]) || !canonical_base64(j[12]))
    return fail("base64");
  r.ciphertext_b64 = j[10].get<std::string>();
  r.iv_b64 = j[11].get<std::string>();
  r.tag_b64 = j[12].get<std::string>();
  if (!j[13].is_binary()) return fail("plaintext");
  r.plaintext = j[13].get_binary();
  if (!get_u64(j[14], std::numeric_limits<std::size_t>::max(), v)) return fail("payload_size");
  r.payload_size = static_cast<std::size_t>(v);
  row = std::move(r);
  return true;
}

}  // namespace dsekp::edge::sinks
