// Writes the seed corpora of every fuzz target (fuzz/corpus/<target>/) from real frames: the
// golden trace's frames (tests/vectors/golden_trace_v1.json, both encodings), frames from the
// encoders at the edges of every range (longest dev_id, largest ciphertext, extreme integers),
// JSON spelled differently but validly (whitespace, member order), and scripts for the scripted
// targets (script_ops.hpp) that walk through handshakes, data, downlink, replays, reordering,
// restarts and reboots. The seeds are small and committed; regenerate them with
//   build-fuzz/bin/fuzz_make_corpus tests/vectors/golden_trace_v1.json fuzz/corpus
// (the output is deterministic but for the admin requests' random nonces). Files named regression-*
// in the corpora are not written here: they are the inputs of fixed findings (docs/RELIABILITY.md),
// added by hand and kept.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

#include "admin_fuzz_key.hpp"
#include "edge/admin/admin_protocol.hpp"
#include "fuzz_support.hpp"
#include "script_ops.hpp"

namespace {

using namespace dsekp;
using fuzz::Bytes;
namespace fs = std::filesystem;

fs::path g_out;

void write(const std::string& target, const std::string& name, const Bytes& bytes) {
  const fs::path dir = g_out / target;
  fs::create_directories(dir);
  std::ofstream f(dir / name, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  fuzz::check(f.good(), "cannot write a seed", (dir / name).string());
}

Bytes text(const std::string& s) {
  return Bytes(s.begin(), s.end());
}

Bytes from_hex(const std::string& hex) {
  Bytes out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<std::uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

// The same JSON with a space and a line break around every separator (valid, not canonical).
std::string spaced(const std::string& json) {
  std::string out;
  for (const char c : json) {
    out += c;
    if (c == ':' || c == ',') out += " \n\t";
  }
  return out + "\r\n";
}

// The same JSON object with its members in reverse order.
std::string reversed(const std::string& json) {
  const auto parsed = nlohmann::ordered_json::parse(json);
  std::vector<std::pair<std::string, nlohmann::ordered_json>> members;
  for (const auto& [key, value] : parsed.items()) members.emplace_back(key, value);
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (auto it = members.rbegin(); it != members.rend(); ++it) out[it->first] = it->second;
  return out.dump();
}

template <typename Fixed>
Fixed pattern(std::uint8_t first) {
  Fixed f;
  for (std::size_t i = 0; i < Fixed::size(); ++i)
    f.data()[i] = static_cast<std::uint8_t>(first + i);
  return f;
}

DevId id(const std::string& s) {
  DevId d;
  fuzz::check(d.assign(s) == Error::ok, "bad dev_id in make_corpus", s);
  return d;
}

const std::string kLongestId =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._";  // 64 bytes

// Writes `frame` in both encodings under target/name_{json,compact}.
template <typename Frame>
void both(const std::string& target, const std::string& name, const Frame& frame) {
  write(target, name + "_json", fuzz::encode_or_fail(frame, Encoding::json));
  write(target, name + "_compact", fuzz::encode_or_fail(frame, Encoding::compact));
}

// ---- frames ----

void golden_frames(const nlohmann::json& trace) {
  const auto s = [&](const char* key) { return trace.at(key).get<std::string>(); };
  for (const char* kind : {"init", "ack", "psk"}) {
    const std::string target = std::string("fuzz_decode_") + kind;
    const std::string json = s((std::string(kind) + "_json").c_str());
    write(target, "golden_json", text(json));
    write(target, "golden_json_spaced", text(spaced(json)));
    write(target, "golden_json_reordered", text(reversed(json)));
    write(target, "golden_compact", from_hex(s((std::string(kind) + "_compact").c_str())));
  }
  for (const char* frame : {"data0", "data1", "down0"}) {
    const std::string json = s((std::string(frame) + "_json").c_str());
    write("fuzz_decode_data", std::string("golden_") + frame + "_json", text(json));
    write("fuzz_decode_data", std::string("golden_") + frame + "_compact",
          from_hex(s((std::string(frame) + "_compact").c_str())));
    write("fuzz_simdjson_diff", std::string("golden_") + frame + "_json", text(json));
    write("fuzz_simdjson_diff", std::string("golden_") + frame + "_json_spaced",
          text(spaced(json)));
    write("fuzz_simdjson_diff", std::string("golden_") + frame + "_json_reordered",
          text(reversed(json)));
  }
  write("fuzz_decode_data", "golden_data0_json_spaced", text(spaced(s("data0_json"))));
  write("fuzz_simdjson_diff", "golden_psk_json", text(s("psk_json")));
  write("fuzz_simdjson_diff", "golden_psk_json_spaced", text(spaced(s("psk_json"))));
}

void extreme_frames() {
  InitFrame init;
  init.dev_id = id(kLongestId);
  init.sessctr = 65535;
  init.t = UINT32_MAX;
  init.dev_nonce = pattern<DevNonce>(0xf4);  // base64 with '+' and '/'
  init.proof = pattern<Proof>(0xf0);
  both("fuzz_decode_init", "longest_id_max_values", init);
  init.dev_id = id("x");
  init.sessctr = 0;
  init.t = 0;
  both("fuzz_decode_init", "shortest_id_zero_values", init);

  AckFrame ack;
  ack.dev_id = id(kLongestId);
  ack.sessctr = 65535;
  ack.edge_nonce = pattern<EdgeNonce>(0xf4);
  ack.status = 255;
  ack.proof = pattern<Proof>(0);
  both("fuzz_decode_ack", "longest_id_status_255", ack);

  Bytes big(kMaxPayloadSize);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<std::uint8_t>(i * 7);
  for (const Direction d : {Direction::uplink, Direction::downlink}) {
    const std::string dir = d == Direction::uplink ? "up" : "down";
    DataFrame f;
    f.direction = d;
    f.dev_id = id(kLongestId);
    f.sessctr = 65535;
    f.seq = UINT32_MAX;
    f.sendts_ms = (std::uint64_t{1} << 53) - 1;
    f.has_iv = true;
    f.iv = pattern<AeadNonce>(0xf4);
    fuzz::check(f.ciphertext.assign(ByteView(big)), "ciphertext");
    f.tag = pattern<AeadTag>(0x30);
    both("fuzz_decode_data", dir + "_largest", f);
    if (d == Direction::uplink) {
      write("fuzz_simdjson_diff", "up_largest_json", fuzz::encode_or_fail(f, Encoding::json));
    }
    f.dev_id = id("a");
    f.seq = 0;
    f.sendts_ms = 0;
    (void)f.ciphertext.assign(ByteView());
    both("fuzz_decode_data", dir + "_empty_ciphertext", f);
    if (d == Direction::uplink) {
      write("fuzz_simdjson_diff", "up_empty_json", fuzz::encode_or_fail(f, Encoding::json));
    }
  }

  PskFrame psk;
  psk.dev_id = id(kLongestId);
  psk.seq = UINT32_MAX;
  psk.sendts_ms = (std::uint64_t{1} << 53) - 1;
  psk.iv = pattern<AeadNonce>(0xf4);
  fuzz::check(psk.ciphertext.assign(ByteView(big)), "ciphertext");
  psk.tag = pattern<AeadTag>(0x30);
  both("fuzz_decode_psk", "largest", psk);
  write("fuzz_simdjson_diff", "psk_largest_json", fuzz::encode_or_fail(psk, Encoding::json));
  psk.dev_id = id("a");
  (void)psk.ciphertext.assign(ByteView());
  both("fuzz_decode_psk", "empty_ciphertext", psk);
}

// ---- scripts ----

// A script under construction: bytes appended in the order the target reads them.
class Script {
 public:
  Script& u8(unsigned v) {
    bytes_.push_back(static_cast<std::uint8_t>(v));
    return *this;
  }
  Script& u16(unsigned v) { return u8(v >> 8).u8(v & 0xff); }
  Script& u32(std::uint32_t v) { return u16(v >> 16).u16(v & 0xffff); }
  Script& raw(const Bytes& b) {
    bytes_.insert(bytes_.end(), b.begin(), b.end());
    return *this;
  }
  Script& op(fuzz::EdgeOp o) { return u8(static_cast<unsigned>(o)); }
  Script& op(fuzz::DeviceOp o) { return u8(static_cast<unsigned>(o)); }
  /// A mutation operand (script_ops.hpp mutate()): kind, position, value.
  Script& mutation(unsigned kind = 0, unsigned where = 0, unsigned value = 0) {
    return u8(kind).u16(where).u8(value);
  }
  [[nodiscard]] const Bytes& bytes() const { return bytes_; }

 private:
  Bytes bytes_;
};

void replay_window_scripts() {
  const auto at_top = [](Script& s, int n) {
    for (int i = 0; i < n; ++i) s.u8(2).u8(0);  // mode 2: seq = top
  };
  Script in_order;
  in_order.u16(64);
  at_top(in_order, 70);
  in_order.u8(0).u8(5).u8(0).u8(63).u8(0).u8(64).u8(0x80).u8(3);  // replay, edge, too_old, check
  write("fuzz_replay_window", "w64_in_order_then_old", in_order.bytes());

  Script reorder;
  reorder.u16(8);
  for (int i = 0; i < 12; ++i) reorder.u8(3).u16(i % 3);  // jumps ahead
  for (int back = 0; back < 12; ++back) reorder.u8(0).u8(back);
  reorder.u8(7);                                                    // persist + restore
  for (int back = 0; back < 12; ++back) reorder.u8(0x80).u8(back);  // check only
  write("fuzz_replay_window", "w8_reorder_restore", reorder.bytes());

  Script wide;
  wide.u16(1024);
  wide.u8(4).u32(1000).u8(1).u16(1023).u8(1).u16(1024).u8(1).u16(500).u8(7).u8(3).u16(64);
  wide.u8(1).u16(600).u8(5).u8(0).u8(5).u8(3).u8(0).u8(1);
  write("fuzz_replay_window", "w1024_far_and_end_of_space", wide.bytes());

  Script clamped;
  clamped.u16(0);
  at_top(clamped, 3);
  clamped.u8(0).u8(0).u8(0).u8(1);
  write("fuzz_replay_window", "w0_clamped_to_1", clamped.bytes());
  Script too_big;
  too_big.u16(1099);
  too_big.u8(4).u32(5000).u8(1).u16(1023).u8(1).u16(1024);
  write("fuzz_replay_window", "w1099_clamped_to_1024", too_big.bytes());
}

void device_scripts(const nlohmann::json& trace) {
  using Op = fuzz::DeviceOp;
  for (const unsigned enc : {0u, 1u}) {
    Script s;
    s.u8(0x3f).u8(0);  // device: window 64; edge: defaults
    s.op(Op::edge_answers).u8(enc).mutation();
    s.op(Op::seal).u8(enc);
    s.op(Op::downlink).u8(enc).mutation();
    s.op(Op::seal).u8(enc);
    s.op(Op::downlink).u8(enc).mutation();
    s.op(Op::replay_down).u8(0).u8(enc).mutation();  // a downlink replay
    s.op(Op::replay_ack).u8(0).u8(enc).mutation();   // an ACK replay
    s.op(Op::tamper_ack).u8(0).u8(3).u8(5);
    s.op(Op::tamper_down).u8(1).u8(0).u32(1);
    s.op(Op::new_handshake);
    s.op(Op::edge_answers).u8(enc).mutation();
    s.op(Op::seal).u8(enc);
    s.op(Op::downlink).u8(enc).mutation();
    s.op(Op::replay_down).u8(1).u8(enc).mutation();  // the old session's frame
    write("fuzz_device_session", enc != 0 ? "rekey_compact" : "rekey_json", s.bytes());
  }
  {
    Script s;  // forged and damaged ACKs before the genuine one
    s.u8(0x3f).u8(0);
    s.op(Op::edge_answers).u8(0).mutation(1, 40, 3);  // one bit flipped
    s.op(Op::tamper_ack).u8(0).u8(1).u8(1);           // status 1
    s.op(Op::tamper_ack).u8(0).u8(0).u8(1);           // sessctr
    s.op(Op::replay_ack).u8(0).u8(1).mutation(2, 20, 0x41);
    s.op(Op::replay_ack).u8(0).u8(0).mutation();  // the genuine one, finally
    s.op(Op::seal).u8(0);
    write("fuzz_device_session", "forged_acks", s.bytes());
  }
  {
    Script s;  // golden frames from another device's session, then time passes
    const Bytes ack = from_hex(trace.at("ack_compact").get<std::string>());
    const Bytes down = from_hex(trace.at("down0_compact").get<std::string>());
    s.u8(0x3f).u8(0);
    s.op(Op::raw_ack).u16(static_cast<unsigned>(ack.size())).raw(ack);
    s.op(Op::clock).u16(1000 * 3 + 1);  // seconds: retransmission due
    s.op(Op::clock).u16(3 * 5 + 2);     // minutes: the INIT expires
    s.op(Op::edge_answers).u8(0).mutation();
    s.op(Op::raw_down).u16(static_cast<unsigned>(down.size())).raw(down);
    s.op(Op::seal).u8(1);
    write("fuzz_device_session", "foreign_frames_and_expiry", s.bytes());
  }
  {
    Script s;  // the end of the seq space, a one-frame downlink window, out-of-order downlink
    s.u8(0x40).u8(0x01);
    s.op(Op::edge_answers).u8(1).mutation();
    for (int i = 0; i < 18; ++i) s.op(Op::seal).u8(i & 1);
    for (int i = 0; i < 3; ++i) s.op(Op::downlink).u8(0).mutation();
    s.op(Op::replay_down).u8(0).u8(0).mutation();
    write("fuzz_device_session", "seq_exhaustion_small_window", s.bytes());
  }
}

void edge_scripts(const nlohmann::json& trace) {
  using Op = fuzz::EdgeOp;
  for (const unsigned enc : {0u, 1u}) {
    Script s;
    s.u8(enc).u8(enc);             // downlink encoding; topic prefix "site1/" for compact
    s.op(Op::init).u8(0).u8(enc);  // history 0
    s.op(Op::take_ack).u8(0);
    s.op(Op::data).u8(0).u8(enc);  // 1 (confirms)
    s.op(Op::data).u8(0).u8(enc);  // 2
    s.op(Op::replay).u8(2);        // a replay: refused
    s.op(Op::downlink).u8(0);      // 3
    s.op(Op::psk).u8(1).u8(enc);   // 4
    s.op(Op::replay).u8(4);        // a PSK replay: accepted, by design
    s.op(Op::restart);
    s.op(Op::replay).u8(1);              // a replay after the restart: refused
    s.op(Op::data).u8(0).u8(enc);        // 5
    s.op(Op::clock).u16(1601);           // 100 s later (mode 1: 62.5 ms units)
    s.op(Op::init).u8(0).u8(enc);        // 6: a new session
    s.op(Op::init_again).u8(0).u8(enc);  // its retransmission
    s.op(Op::take_ack).u8(0);
    s.op(Op::data).u8(0).u8(enc);
    s.op(Op::replay).u8(5);  // the old session's frame
    s.op(Op::tamper).u8(5).u8(0).u32(1);
    s.op(Op::mutate).u8(5).mutation(1, 10, 2);
    write("fuzz_edge_service", enc != 0 ? "session_compact" : "session_json", s.bytes());
  }
  {
    Script s;  // replay window 2: frames held back, then delivered in reverse
    s.u8(0x10).u8(0);
    s.op(Op::init).u8(1).u8(0);
    s.op(Op::take_ack).u8(1);
    s.op(Op::data).u8(1).u8(0);
    for (int i = 0; i < 4; ++i) s.op(Op::data).u8(1).u8(2 | (i & 1));  // held: history 2..5
    for (int i = 5; i >= 2; --i) s.op(Op::replay).u8(static_cast<unsigned>(i));
    write("fuzz_edge_service", "reorder_small_window", s.bytes());
  }
  {
    Script s;  // one session per device at most, reboots, a withheld INIT, forgeries
    s.u8(0x02).u8(0);
    s.op(Op::init).u8(2).u8(0);
    s.op(Op::take_ack).u8(2);
    s.op(Op::data).u8(2).u8(1);
    s.op(Op::init).u8(2).u8(2);  // held back
    s.op(Op::reboot).u8(2);
    s.op(Op::clock).u16(1);
    s.op(Op::init).u8(2).u8(0);
    s.op(Op::take_ack).u8(2);
    s.op(Op::data).u8(2).u8(0);
    s.op(Op::replay).u8(2);  // the withheld INIT, late
    for (unsigned field = 0; field < 7; ++field) s.op(Op::tamper).u8(1).u8(field).u32(7);
    s.op(Op::init).u8(3).u8(0);  // the device the registry does not know
    s.op(Op::data).u8(3).u8(0);
    s.op(Op::psk).u8(3).u8(1);
    s.op(Op::downlink).u8(0);  // no session: refused
    write("fuzz_edge_service", "reboot_withheld_forged", s.bytes());
  }
  {
    Script s;  // clockless devices, an INIT flood, the clock stepping back
    s.u8(0xc0).u8(0);
    for (int i = 0; i < 10; ++i) s.op(Op::init).u8(0).u8(i & 1);
    s.op(Op::take_ack).u8(0);
    s.op(Op::data).u8(0).u8(0);
    s.op(Op::clock).u16(3 + 4 * 200);  // mode 3: the clock steps back 803 s
    s.op(Op::init).u8(0).u8(0);
    s.op(Op::take_ack).u8(0);
    s.op(Op::data).u8(0).u8(0);
    write("fuzz_edge_service", "clockless_flood", s.bytes());
  }
  {
    // No INIT budget and a 5 s freshness window: the INIT replay cache fills up, then expires.
    Script s;
    s.u8(0x40).u8(2 << 4);
    for (int i = 0; i < 40; ++i) s.op(Op::init).u8(0).u8(i & 1);
    s.op(Op::clock).u16(1 + 4 * 160);  // 10 s later (mode 1: 62.5 ms units)
    for (int i = 0; i < 3; ++i) s.op(Op::init).u8(0).u8(0);
    s.op(Op::replay).u8(0);  // the first INIT, stale by now
    s.op(Op::take_ack).u8(0);
    s.op(Op::data).u8(0).u8(0);
    write("fuzz_edge_service", "init_cache_full_and_expiry", s.bytes());
  }
  {
    // Hostile raw messages: golden frames (other keys), garbage, wrong topics.
    Script s;
    s.u8(0).u8(6 << 1);  // PSK mode disabled
    const auto raw = [&](unsigned topic, const Bytes& payload) {
      s.op(Op::raw).u8(topic).u16(static_cast<unsigned>(payload.size())).raw(payload);
    };
    raw(0, text(trace.at("init_json").get<std::string>()));
    raw(1, from_hex(trace.at("data0_compact").get<std::string>()));
    raw(2, text(trace.at("psk_json").get<std::string>()));
    raw(3, text(trace.at("ack_json").get<std::string>()));
    raw(5, text("{}"));
    raw(6, text("x"));
    s.op(Op::raw).u8(7).u8(10).raw(text("dsekp/init")).u16(3).raw(text("{\"v"));
    raw(1, text("{\"seq\":1,\"seq\":2}"));
    raw(0, Bytes(3000, '{'));
    write("fuzz_edge_service", "hostile_raw", s.bytes());
  }
}

// Admin requests signed with the fuzz target's key (admin_fuzz_key.hpp): a command, an empty
// one, the largest, one for a long dev_id, and one unsigned. Their nonces are random, so these
// seeds differ from run to run (the others do not).
void admin_requests() {
  const auto signed_request = [](const std::string& id, const std::string& dev_id,
                                 const Bytes& payload, bool sign_it) {
    edge::admin::DownlinkRequest r;
    r.request_id = id;
    r.dev_id = dev_id;
    r.payload = payload;
    if (sign_it) edge::admin::sign(fuzz::admin_fuzz_key(), "", r, fuzz::kAdminFuzzNowMs);
    return text(edge::admin::encode(r));
  };
  write("fuzz_admin_request", "command", signed_request("r-1", "esp32-01", text("led on"), true));
  write("fuzz_admin_request", "empty", signed_request("r-2", "esp32-01", Bytes{}, true));
  write("fuzz_admin_request", "largest",
        signed_request("r-3", "esp32-01", Bytes(kMaxPayloadSize, 0x5a), true));
  write("fuzz_admin_request", "long_dev_id",
        signed_request(std::string(64, 'i'), std::string(64, 'd'), text("{}"), true));
  write("fuzz_admin_request", "unsigned", signed_request("r-4", "esp32-01", text("x"), false));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s GOLDEN_TRACE_JSON OUT_DIR\n", argv[0]);
    return 2;
  }
  std::ifstream in(argv[1]);
  const nlohmann::json golden = nlohmann::json::parse(in);
  const nlohmann::json& trace = golden.at("trace");
  g_out = argv[2];
  golden_frames(trace);
  extreme_frames();
  replay_window_scripts();
  device_scripts(trace);
  edge_scripts(trace);
  admin_requests();
  std::printf("seed corpora written to %s\n", argv[2]);
  return 0;
}
