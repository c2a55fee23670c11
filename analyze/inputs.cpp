// Input file collection and pairing (see inputs.hpp).
#include "inputs.hpp"

#include <string>

#include "error.hpp"
#include "log_schema.hpp"

namespace dsekp::analyze {
namespace {

void add_directory(const std::filesystem::path& dir, AnalysisInputs& inputs) {
  if (!std::filesystem::is_directory(dir))
    throw AnalyzeError("--logs " + dir.string() + ": not a directory");
  bool found = false;
  for (const Mode mode : {Mode::psk, Mode::dsekp}) {
    const auto server = dir / standard_file_name(LogKind::server, mode);
    const auto client = dir / standard_file_name(LogKind::client, mode);
    const bool has_server = std::filesystem::exists(server);
    const bool has_client = std::filesystem::exists(client);
    if (has_client && !has_server)
      throw AnalyzeError(client.string() + " has no server log beside it (expected " +
                         server.string() + ")");
    if (!has_server) continue;
    found = true;
    RunFiles run{server, std::nullopt};
    if (has_client) run.client = client;
    (mode == Mode::psk ? inputs.psk : inputs.dsekp).push_back(run);
  }
  const auto handshakes = dir / standard_file_name(LogKind::handshakes, Mode::dsekp);
  if (std::filesystem::exists(handshakes)) {
    found = true;
    inputs.handshakes.push_back(handshakes);
  }
  if (!found)
    throw AnalyzeError("--logs " + dir.string() + ": none of " +
                       standard_file_name(LogKind::server, Mode::psk) + ", " +
                       standard_file_name(LogKind::server, Mode::dsekp) + ", " +
                       standard_file_name(LogKind::handshakes, Mode::dsekp) + " is there");
}

void add_pairs(std::string_view mode, const std::vector<std::filesystem::path>& servers,
               const std::vector<std::filesystem::path>& clients, std::vector<RunFiles>& runs) {
  if (!clients.empty() && clients.size() != servers.size())
    throw AnalyzeError("--" + std::string(mode) + "-client given " +
                       std::to_string(clients.size()) + " time(s) and --" + std::string(mode) +
                       "-server " + std::to_string(servers.size()) +
                       " time(s): client logs pair with server logs by position, so give one per "
                       "server log (or none)");
  for (std::size_t i = 0; i < servers.size(); ++i) {
    RunFiles run{servers[i], std::nullopt};
    if (!clients.empty()) run.client = clients[i];
    runs.push_back(run);
  }
}

}  // namespace

AnalysisInputs collect_inputs(std::span<const std::filesystem::path> log_dirs,
                              const ExplicitFiles& files) {
  AnalysisInputs inputs;
  for (const auto& dir : log_dirs) add_directory(dir, inputs);
  add_pairs("psk", files.psk_server, files.psk_client, inputs.psk);
  add_pairs("dsekp", files.dsekp_server, files.dsekp_client, inputs.dsekp);
  inputs.handshakes.insert(inputs.handshakes.end(), files.handshakes.begin(),
                           files.handshakes.end());
  if (inputs.psk.empty() && inputs.dsekp.empty() && inputs.handshakes.empty())
    throw AnalyzeError(
        "no logs to analyse: give --logs DIR or --psk-server/--dsekp-server/--handshakes FILE");
  return inputs;
}

}  // namespace dsekp::analyze
