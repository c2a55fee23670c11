// Writes the golden trace as JSON (tests/vectors/golden_trace_v1.json) or as the Markdown table of
// docs/PROTOCOL.md. Regenerate only when the protocol changes on purpose:
//   build/bin/golden_trace_tool json > tests/vectors/golden_trace_v1.json
//   build/bin/golden_trace_tool markdown
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "crypto/openssl/openssl_crypto.hpp"
#include "golden_trace.hpp"

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode != "json" && mode != "markdown") {
    std::fprintf(stderr, "usage: golden_trace_tool json|markdown\n");
    return 2;
  }
  dsekp::OpenSslCrypto crypto;
  const dsekp::golden::Trace trace = dsekp::golden::compute_golden_trace(crypto);
  if (mode == "json") {
    nlohmann::ordered_json out;
    out["protocol"] = "DSEKP v1";
    out["note"] = "hex unless the name ends in _json or the value is a decimal integer or text";
    for (const auto& [name, value] : trace) out["trace"][name] = value;
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    std::printf("| name | value |\n|---|---|\n");
    for (const auto& [name, value] : trace)
      std::printf("| `%s` | `%s` |\n", name.c_str(), value.c_str());
  }
  return 0;
}
