// The admin messages (see admin_protocol.hpp).
#include "edge/admin/admin_protocol.hpp"

#include <nlohmann/json.hpp>

#include "core/base64.hpp"
#include "dsekp/spec.hpp"
#include "edge/registry/text_encoding.hpp"

namespace dsekp::edge::admin {

std::string request_topic(std::string_view prefix) {
  return std::string(prefix) + "dsekp/admin/downlink";
}

std::string result_topic(std::string_view prefix, std::string_view request_id) {
  return std::string(prefix) + "dsekp/admin/result/" + std::string(request_id);
}

const char* downlink_status_name(DownlinkStatus s) noexcept {
  switch (s) {
    case DownlinkStatus::sent:
      return "sent";
    case DownlinkStatus::queued:
      return "queued";
    case DownlinkStatus::expired:
      return "expired";
    case DownlinkStatus::refused:
      return "refused";
  }
  return "refused";
}

bool valid_response_topic(std::string_view prefix, std::string_view topic) noexcept {
  const std::string base = result_topic(prefix, "");
  if (topic.size() <= base.size() || topic.size() > 256 || topic.substr(0, base.size()) != base)
    return false;
  return topic.find_first_of("+#") == std::string_view::npos &&
         topic.find('\0') == std::string_view::npos;
}

bool valid_request_id(std::string_view id) noexcept {
  if (id.empty() || id.size() > 64) return false;
  for (const char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string encode(const DownlinkRequest& r) {
  return nlohmann::json{{"request_id", r.request_id},
                        {"dev_id", r.dev_id},
                        {"sealed_b64", to_base64(ByteView(r.sealed.data(), r.sealed.size()))},
                        {"ts_ms", r.ts_ms},
                        {"mac", r.mac_hex}}
      .dump();
}

std::string encode(const DownlinkResult& r) {
  nlohmann::json j{{"request_id", r.request_id},
                   {"status", downlink_status_name(r.status)},
                   {"ok", r.ok()},
                   {"reason", r.reason},
                   {"dev_id", r.dev_id}};
  if (r.seq) j["seq"] = *r.seq;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

namespace {

bool string_member(const nlohmann::json& j, const char* name, std::string& out,
                   std::string& error) {
  const auto it = j.find(name);
  if (it == j.end() || !it->is_string()) {
    error = std::string("missing or non-string \"") + name + "\"";
    return false;
  }
  out = it->get<std::string>();
  return true;
}

}  // namespace

bool parse(std::string_view text, DownlinkRequest& out, std::string& error) {
  const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) {
    error = "not a JSON object";
    return false;
  }
  std::string b64;
  if (!string_member(j, "request_id", out.request_id, error)) return false;
  if (!valid_request_id(out.request_id)) {
    out.request_id.clear();  // not safe in a topic: nobody to answer
    error = "bad request_id";
    return false;
  }
  if (!string_member(j, "dev_id", out.dev_id, error)) return false;
  if (!is_valid_dev_id(out.dev_id)) {
    error = "bad dev_id";
    return false;
  }
  if (j.contains("payload_b64")) {
    error = "a payload in clear (payload_b64) is refused: requests carry it sealed (sealed_b64)";
    return false;
  }
  if (!string_member(j, "sealed_b64", b64, error)) return false;
  // Absent or malformed: left empty, and the edge refuses the request as unauthenticated.
  if (const auto ts = j.find("ts_ms"); ts != j.end() && ts->is_number_unsigned())
    out.ts_ms = ts->get<std::uint64_t>();
  if (const auto mac = j.find("mac"); mac != j.end() && mac->is_string())
    out.mac_hex = mac->get<std::string>();
  // At most kMaxPayloadSize bytes are ever sealed as a downlink: a longer request is not even
  // decoded.
  out.payload.clear();
  out.sealed.resize(kNonceSize + kMaxPayloadSize + kTagSize);
  std::size_t n = 0;
  const Error e = base64::decode(b64, out.sealed, n);
  if (e == Error::buffer_too_small) {
    out.sealed.clear();
    out.payload_too_large = true;
    return true;
  }
  if (e != Error::ok) {
    out.sealed.clear();
    error = "sealed_b64 is not canonical base64";
    return false;
  }
  out.sealed.resize(n);
  return true;
}

bool parse(std::string_view text, DownlinkResult& out, std::string& error) {
  const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) {
    error = "not a JSON object";
    return false;
  }
  if (!string_member(j, "request_id", out.request_id, error) ||
      !string_member(j, "reason", out.reason, error) ||
      !string_member(j, "dev_id", out.dev_id, error))
    return false;
  std::string status;
  if (!string_member(j, "status", status, error)) return false;
  bool known = false;
  for (const DownlinkStatus s : {DownlinkStatus::sent, DownlinkStatus::queued,
                                 DownlinkStatus::expired, DownlinkStatus::refused})
    if (status == downlink_status_name(s)) {
      out.status = s;
      known = true;
    }
  if (!known) {
    error = "unknown \"status\": " + status;
    return false;
  }
  if (const auto seq = j.find("seq"); seq != j.end()) {
    if (!seq->is_number_unsigned() || seq->get<std::uint64_t>() > 0xffffffffu) {
      error = "bad \"seq\"";
      return false;
    }
    out.seq = static_cast<std::uint32_t>(seq->get<std::uint64_t>());
  }
  return true;
}

}  // namespace dsekp::edge::admin
