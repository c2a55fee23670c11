// Frame size and per-frame cost measurement (see frames_bench.hpp).
#include "frames_bench.hpp"

#include <array>
#include <ctime>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "bench_credentials.hpp"
#include "codec_simdjson/simd_codec.hpp"
#include "cpu_timer.hpp"
#include "dsekp/codec.hpp"
#include "dsekp/device_session.hpp"
#include "dsekp/edge_session.hpp"
#include "dsekp/psk_baseline.hpp"

namespace dsekp::bench {
namespace {

const std::string kReading = R"({"t":24.0,"h":51.0})";
constexpr std::uint64_t kSendTs = 1'764'460'800'123;  // 13 digits, like the paper's sendts_ms

ByteView reading_bytes() {
  return ByteView(reinterpret_cast<const std::uint8_t*>(kReading.data()), kReading.size());
}

std::vector<std::uint8_t> encoded(const auto& frame, Encoding enc) {
  std::vector<std::uint8_t> buf(kMaxFrameSize);
  std::size_t n = 0;
  require(encode(frame, enc, buf, n), "encode");
  buf.resize(n);
  return buf;
}

// Hashes std::string and std::string_view alike, so the table is searched without building a
// std::string per frame (heterogeneous lookup, as a gateway's registry would do).
struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept {
    return std::hash<std::string_view>{}(s);
  }
};

// An established device/edge pair; the edge table holds `devices` entries like a real gateway.
struct Testbed {
  Testbed(CryptoBackend& crypto, Rng& rng, std::size_t devices)
      : credentials(bench_credentials("esp32-01")),
        edge(crypto,
             [&] {
               EdgeConfig c;
               c.edge_salt = credentials.edge_salt;
               c.init_rate.capacity = 0;
               return c;
             }()),
        device(crypto, credentials) {
    for (std::size_t i = 0; i < devices; ++i) table["filler-" + std::to_string(i)];
    EdgeDeviceState& state = table["esp32-01"];
    const auto now_s = static_cast<std::uint32_t>(kSendTs / 1000);
    InitFrame init;
    require(device.start_handshake(now_s, rng, init), "start_handshake");
    InitOutcome out;
    require(edge.handle_init(init, credentials.dev_secret, state, kSendTs, rng, out),
            "handle_init");
    require(device.handle_ack(out.ack), "handle_ack");
  }
  DeviceCredentials credentials;
  EdgeProtocol edge;
  DeviceSession device;
  std::unordered_map<std::string, EdgeDeviceState, StringHash, std::equal_to<>> table;
};

// Encoded frames stored back to back in one buffer.
class WireLog {
 public:
  explicit WireLog(std::size_t frames) {
    bytes_.reserve(frames * 200);
    offsets_.reserve(frames + 1);
    offsets_.push_back(0);
  }
  void append(const auto& frame, Encoding enc) {
    const std::size_t at = bytes_.size();
    bytes_.resize(at + kMaxFrameSize);
    std::size_t n = 0;
    require(encode(frame, enc, MutableByteView(bytes_).subspan(at), n), "encode");
    bytes_.resize(at + n);
    offsets_.push_back(bytes_.size());
  }
  [[nodiscard]] ByteView frame(std::size_t i) const {
    return ByteView(bytes_).subspan(offsets_[i], offsets_[i + 1] - offsets_[i]);
  }

 private:
  std::vector<std::uint8_t> bytes_;
  std::vector<std::size_t> offsets_;
};

// Thread CPU ns per call of `body(i)` for i in [0, n), median over repetitions.
template <typename Body>
double ns_per_call(std::size_t n, std::size_t repetitions, Body body) {
  std::vector<double> samples;
  std::size_t offset = 0;
  for (std::size_t r = 0; r < repetitions; ++r) {
    const std::uint64_t start = thread_cpu_ns();
    for (std::size_t i = 0; i < n; ++i) body(offset + i);
    samples.push_back(static_cast<double>(thread_cpu_ns() - start) / static_cast<double>(n));
    offset += n;
  }
  return median_of(samples);
}

struct PairedCost {
  double ns = 0;          // median thread CPU ns per call of the body
  double over_floor = 0;  // median of the repetitions' body / floor ratios
};

// As ns_per_call, with `floor()` timed over as many calls right before each repetition of the
// body: the ratio of two measurements a moment apart, so that a machine whose speed drifts during
// the run (this machine class varies 10-20 % within minutes) moves both sides of it together.
template <typename Floor, typename Body>
PairedCost paired_ns_per_call(std::size_t n, std::size_t repetitions, Floor floor, Body body) {
  std::vector<double> samples;
  std::vector<double> ratios;
  std::size_t offset = 0;
  for (std::size_t r = 0; r < repetitions; ++r) {
    const std::uint64_t floor_start = thread_cpu_ns();
    for (std::size_t i = 0; i < n; ++i) floor();
    const std::uint64_t start = thread_cpu_ns();
    for (std::size_t i = 0; i < n; ++i) body(offset + i);
    const std::uint64_t end = thread_cpu_ns();
    samples.push_back(static_cast<double>(end - start) / static_cast<double>(n));
    if (start > floor_start)
      ratios.push_back(static_cast<double>(end - start) / static_cast<double>(start - floor_start));
    offset += n;
  }
  return {median_of(samples), ratios.empty() ? 0 : median_of(ratios)};
}

}  // namespace

FrameSizes measure_frame_sizes(CryptoBackend& crypto, Rng& rng) {
  Testbed bed(crypto, rng, 0);
  FrameSizes sizes;
  sizes.plaintext = kReading.size();
  DataFrame frame;
  require(bed.device.seal(reading_bytes(), kSendTs, frame), "seal");
  frame.sessctr = 54321;  // size with a 5-digit sessctr, independent of the random draw
  sizes.dsekp_json = encoded(frame, Encoding::json).size();
  sizes.dsekp_compact = encoded(frame, Encoding::compact).size();
  PskFrame psk;
  const PskKey key = PskKey::from(std::array<std::uint8_t, 16>{});
  require(psk_seal(crypto, key, bed.credentials.dev_id, 0, kSendTs, reading_bytes(), rng, psk),
          "psk_seal");
  sizes.psk_json = encoded(psk, Encoding::json).size();
  sizes.psk_compact = encoded(psk, Encoding::compact).size();
  return sizes;
}

FrameCosts measure_frame_costs(CryptoBackend& crypto, Rng& rng, std::size_t frames,
                               std::size_t repetitions, std::size_t devices) {
  FrameCosts costs;
  costs.backend = crypto.name();
  costs.frames = frames;
  const std::size_t total = frames * repetitions;
  std::array<std::uint8_t, kMaxPayloadSize> plaintext{};

  // Floor: a bare AES-128-GCM open of the same plaintext under one key.
  std::array<std::uint8_t, 16> floor_key{};
  floor_key.fill(0x42);
  const AeadNonce floor_nonce;
  AeadTag floor_tag;
  std::vector<std::uint8_t> floor_ct(kReading.size());
  std::array<std::uint8_t, kMaxPayloadSize> floor_plaintext{};
  require(crypto.aes128_gcm_seal(floor_key, floor_nonce, ByteView(), reading_bytes(), floor_ct,
                                 floor_tag),
          "seal");
  const auto floor_open = [&] {
    require(crypto.aes128_gcm_open(floor_key, floor_nonce, ByteView(), floor_ct, floor_tag,
                                   MutableByteView(floor_plaintext).first(floor_ct.size())),
            "open");
  };
  {
    // Warm up, then measure.
    for (int i = 0; i < 1000; ++i) floor_open();
    costs.bare_gcm_open_ns = ns_per_call(frames, repetitions, [&](std::size_t) { floor_open(); });
    // The same with an AAD of the size DSEKP authenticates for esp32-01 (label, dev_id, header).
    std::array<std::uint8_t, 38> aad{};
    AeadTag tag;
    std::vector<std::uint8_t> ct(kReading.size());
    require(crypto.aes128_gcm_seal(floor_key, floor_nonce, aad, reading_bytes(), ct, tag), "seal");
    costs.gcm_open_with_aad_ns = ns_per_call(frames, repetitions, [&](std::size_t) {
      require(crypto.aes128_gcm_open(floor_key, floor_nonce, aad, ct, tag,
                                     MutableByteView(plaintext).first(ct.size())),
              "open");
    });
  }

  // Device seal + encode, then the edge's open path on the frames it produced: JSON through the
  // edge's simdjson decoder, JSON through the portable decoder (what a device build has), and
  // compact. Each variant gets its own session, so no frame is a replay of another variant's.
  enum class Path { json_simdjson, json_portable, compact };
  SimdJsonDecoder simd;
  for (Path path : {Path::json_simdjson, Path::json_portable, Path::compact}) {
    const Encoding enc = path == Path::compact ? Encoding::compact : Encoding::json;
    Testbed bed(crypto, rng, devices);
    // Frames are stored back to back, as they would arrive in a receive buffer.
    WireLog wire(total);
    DataFrame sealed;
    const double seal_ns = ns_per_call(frames, repetitions, [&](std::size_t i) {
      require(bed.device.seal(reading_bytes(), kSendTs + i, sealed), "seal");
      wire.append(sealed, enc);
    });
    if (path == Path::json_simdjson) costs.device_seal_json_ns = seal_ns;

    DataFrame received;
    DataOutcome outcome;
    const PairedCost open = paired_ns_per_call(frames, repetitions, floor_open, [&](std::size_t i) {
      require(path == Path::json_portable
                  ? decode_data(wire.frame(i), Direction::uplink, received)
                  : simd.decode_data(wire.frame(i), Direction::uplink, received),
              "decode");
      // The edge finds the device by the dev_id in the frame, as the gateway does.
      auto it = bed.table.find(received.dev_id.str());
      if (it == bed.table.end()) throw std::runtime_error("unknown device");
      require(bed.edge.open_data(received, it->second, kSendTs, plaintext, outcome), "open_data");
    });
    switch (path) {
      case Path::json_simdjson:
        costs.edge_open_json_ns = open.ns;
        costs.edge_open_json_over_floor = open.over_floor;
        break;
      case Path::json_portable:
        costs.edge_open_json_portable_ns = open.ns;
        break;
      case Path::compact:
        costs.edge_open_compact_ns = open.ns;
        costs.edge_open_compact_over_floor = open.over_floor;
        break;
    }
  }

  // Baseline PSK: decode + decrypt, nothing else (it has no sessions and no replay window).
  {
    const PskKey key = PskKey::from(std::array<std::uint8_t, 16>{});
    DevId dev_id;
    require(dev_id.assign("esp32-01"), "dev_id");
    PskFrame frame;
    require(psk_seal(crypto, key, dev_id, 0, kSendTs, reading_bytes(), rng, frame), "psk_seal");
    const std::vector<std::uint8_t> wire = encoded(frame, Encoding::json);
    PskFrame received;
    std::size_t n = 0;
    costs.psk_open_json_ns = ns_per_call(frames, repetitions, [&](std::size_t) {
      require(simd.decode_psk(wire, received), "decode_psk");
      require(psk_open(crypto, key, received, plaintext, n), "psk_open");
    });
  }
  return costs;
}

}  // namespace dsekp::bench
