// LinkSpec: what the link emulator does to the bytes of each direction of a relayed TCP
// connection, and its parser for the `--link` text ("delay=250ms,jitter=80ms,stall=0.5%").
// The parser is a pure function: the text in, a LinkSpec or an error naming the key and value out.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dsekp::linkemu {

/// How a chunk's one-way delay is drawn. Each has mean `delay` and standard deviation `jitter`.
enum class DelayDistribution {
  normal,     ///< N(delay, jitter) cut at 0 (the cut raises the mean when jitter is near delay)
  lognormal,  ///< lognormal with that mean and standard deviation (needs delay > 0)
  pareto,     ///< Pareto (heavy right tail, never below a floor) with that mean and sd
};

/// What a drop does to the connection it hits.
enum class DropMode {
  rst,        ///< both sockets closed with an RST (SO_LINGER 0): peers see ECONNRESET
  fin,        ///< both sockets shut down and closed: peers see end of stream
  blackhole,  ///< nothing is relayed any more, sockets stay open until a peer closes its side
};

/// One direction of a connection gets this treatment; both directions get it independently.
/// A "chunk" is what one read() from the source socket returned (see docs/LINK_EMULATOR.md).
struct LinkSpec {
  std::chrono::microseconds delay{0};   ///< mean one-way delay
  std::chrono::microseconds jitter{0};  ///< standard deviation of the delay
  DelayDistribution distribution = DelayDistribution::normal;
  std::uint64_t rate_bits_per_s = 0;  ///< per direction per connection; 0 = unlimited
  std::uint64_t burst_bytes = 0;      ///< token bucket depth; 0 = pure serialization at `rate`
  double stall = 0.0;                 ///< probability per chunk that the connection stalls
  std::chrono::microseconds stall_time{std::chrono::seconds(1)};  ///< how long a stall lasts
  double drop = 0.0;  ///< probability per chunk that the connection is cut
  DropMode drop_mode = DropMode::rst;
  /// Bytes held per direction at most; above it the emulator stops reading (TCP backpressure).
  std::uint64_t queue_bytes = std::uint64_t{1} << 20;

  /// True when the spec changes nothing but buffering (no delay, rate, stall or drop).
  [[nodiscard]] bool pure_relay() const noexcept;
  friend bool operator==(const LinkSpec&, const LinkSpec&) = default;
};

/// The result of parse_link_spec: `spec` on success, else `error`, which starts with the
/// offending key (e.g. `delay: "25xs" is not a duration (use e.g. 250ms, 1s, 500us)`).
struct LinkSpecResult {
  std::optional<LinkSpec> spec;
  std::string error;
  [[nodiscard]] bool ok() const noexcept { return spec.has_value(); }
};

/// Parses comma-separated `key=value` items; "" or "none" is the pure relay. Keys:
///   delay, jitter, stall_time  durations: a number with us, ms or s (a bare 0 is allowed)
///   rate                       bits per second: bit, kbit, mbit, gbit (SI, case-insensitive, as
///                              tc), or bytes per second: B, kB, MB, GB (SI), "/s" optional
///   burst, queue               bytes: a bare integer, or B, kB, MB (SI), KiB, MiB
///   stall, drop                probabilities: a percentage (0.5%) or a fraction (0.005)
///   dist                       normal | lognormal | pareto
///   drop_mode                  rst | fin | blackhole
/// Unknown and repeated keys, bad values, and `loss` (meaningless on a TCP relay) are errors.
[[nodiscard]] LinkSpecResult parse_link_spec(std::string_view text);

/// The canonical text of a spec (only the keys that differ from the defaults; "none" for the
/// default spec), such that parse_link_spec(format_link_spec(s)) == s.
[[nodiscard]] std::string format_link_spec(const LinkSpec& spec);

[[nodiscard]] std::string_view to_string(DelayDistribution d) noexcept;
[[nodiscard]] std::string_view to_string(DropMode m) noexcept;

}  // namespace dsekp::linkemu
