// Link presets (see link_presets.hpp).
#include "link_presets.hpp"

#include <stdexcept>

namespace dsekp::experiment {

LinkChoice resolve_link(std::string_view text) {
  if (text.empty())
    throw std::invalid_argument(
        "--link: empty; give a SPEC (delay=250ms,jitter=80ms,...), none "
        "or paper-wifi");
  if (text == "paper-wifi")
    return {"paper-wifi", std::string(kPaperWifiSpec),
            "approximates the paper's 2.4 GHz Wi-Fi path (its PSK latencies: median 274 ms, p95 "
            "379 ms, p99 444 ms, sd 182.9 ms with spikes above 2 s): normal delay 275 +- 65 ms "
            "plus 0.5 % stalls of 2 s (derivation in experiment/link_presets.hpp)"};
  if (text == "none")
    return {"none", "none", "a pure TCP relay without impairments (measures the relay's own cost)"};
  return {"custom", std::string(text), "the link SPEC given on the command line"};
}

}  // namespace dsekp::experiment
