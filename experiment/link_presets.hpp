// Named link-emulator settings for `dsekp experiment --link NAME`, and plain SPECs passed through
// to `dsekp link --link SPEC` (contracts: delay, jitter, rate, stall, stall_time, drop).
//
// paper-wifi approximates the path between the paper's ESP32 and its broker (2.4 GHz Wi-Fi, one
// access point; Tables 6-7). Where its numbers come from (PSK column, the baseline without any
// protocol extra):
//   delay=275ms   the median one-way latency, 274 ms (Table 7), rounded;
//   jitter=65ms   the spread of the body: (p95 - median) / 1.645 = (379 - 274) / 1.645 = 64 ms and
//                 (p99 - median) / 2.326 = (444 - 274) / 2.326 = 73 ms, for a normal body;
//   stall=0.5%,   the tail: the paper's standard deviation (182.9 ms) is far above the body's
//   stall_time=2s ~65 ms, and section 5.2 reports spikes above 2 s. A fraction p of frames delayed
//                 by S adds about p*S^2 to the variance: 182.9^2 - 65^2 = 29,200 ms^2, and
//                 p = 0.5 %, S = 2 s gives 20,000 ms^2 (sd ~156 ms) and +10 ms to the mean
//                 (284 ms against the paper's 283). Stalls are drawn per relayed chunk, so the
//                 realised rate depends on the traffic; treat these as a rough match.
// The link applies the SPEC in each direction, so a round trip (INIT -> ACK) crosses it twice.
#pragma once

#include <string>
#include <string_view>

namespace dsekp::experiment {

struct LinkChoice {
  std::string name;         // the preset's name, or "custom"
  std::string spec;         // what `dsekp link --link` gets ("none" = a pure relay)
  std::string description;  // one sentence for the report
};

/// Resolves --link: a preset name (paper-wifi), "none" (relay without impairments) or a SPEC,
/// passed through unchanged (dsekp link checks it). Throws std::invalid_argument for an empty one.
LinkChoice resolve_link(std::string_view text);

/// The paper-wifi SPEC.
inline constexpr std::string_view kPaperWifiSpec =
    "delay=275ms,jitter=65ms,stall=0.5%,stall_time=2s";

}  // namespace dsekp::experiment
