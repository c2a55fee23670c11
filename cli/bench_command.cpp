// `dsekp bench handshake`, `dsekp bench frames` and `dsekp bench sessions` (see bench_command.hpp
// and docs/PERFORMANCE.md).
#include "bench_command.hpp"

#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "crypto/mbedtls/mbedtls_crypto.hpp"
#include "crypto/openssl/openssl_crypto.hpp"
#include "dsekp_handshake_bench.hpp"
#include "frames_bench.hpp"
#include "sessions_bench.hpp"
#include "tls_handshake.hpp"

namespace dsekp::cli {
namespace {

using nlohmann::json;

struct HandshakeOptions {
  std::size_t iterations = 2000;
  std::size_t tls_iterations = 300;
  bool as_json = false;
};

struct FramesOptions {
  std::size_t frames = 20000;
  std::size_t repetitions = 7;
  std::size_t devices = 1000;
  bool as_json = false;
};

struct SessionsOptions {
  bench::SessionsBenchOptions bench;
  bool as_json = false;
};

json to_json(const bench::DsekpHandshakeStats& s) {
  return {{"backend", s.backend},
          {"with_json_codec", s.with_codec},
          {"iterations", s.iterations},
          {"cpu_us_mean", s.cpu_us_mean},
          {"cpu_us_median", s.cpu_us_median},
          {"cpu_us_min", s.cpu_us_min}};
}

json to_json(const bench::TlsHandshakeStats& s) {
  return {{"mode", bench::tls_mode_name(s.mode)},
          {"iterations", s.iterations},
          {"cpu_us_mean", s.cpu_us_mean},
          {"cpu_us_median", s.cpu_us_median},
          {"cpu_us_min", s.cpu_us_min},
          {"negotiated_group", s.negotiated_group},
          {"used_psk", s.used_psk},
          {"peer_verified", s.peer_verified},
          {"server_sent_key_share", s.server_sent_key_share}};
}

void run_handshake(const HandshakeOptions& options) {
  OpenSslCrypto openssl;
  MbedtlsCrypto mbedtls;
  OpenSslRng rng;
  const auto dsekp_openssl =
      bench::measure_dsekp_handshake(openssl, openssl, rng, options.iterations, false);
  const auto dsekp_openssl_json =
      bench::measure_dsekp_handshake(openssl, openssl, rng, options.iterations, true);
  const auto dsekp_mbedtls =
      bench::measure_dsekp_handshake(mbedtls, mbedtls, rng, options.iterations, false);

  bench::TlsHandshakeBench tls;
  std::vector<bench::TlsHandshakeStats> tls_stats;
  for (auto mode :
       {bench::TlsMode::ecdhe_x25519_p256_cert, bench::TlsMode::psk_dhe_ke, bench::TlsMode::psk_ke})
    tls_stats.push_back(tls.run(mode, options.tls_iterations));

  const double base = dsekp_openssl.cpu_us_median;
  const double ecdhe_ratio = tls_stats[0].cpu_us_median / base;
  if (options.as_json) {
    json out = {
        {"unit", "thread CPU microseconds per handshake, both sides"},
        {"dsekp", {to_json(dsekp_openssl), to_json(dsekp_openssl_json), to_json(dsekp_mbedtls)}},
        {"tls13", json::array()},
        {"ratio_basis", "TLS median / DSEKP (openssl, no codec) median"},
        {"target_ecdhe_ratio_min", 100},
        {"ecdhe_ratio_met", ecdhe_ratio >= 100}};
    for (const auto& s : tls_stats) {
      json j = to_json(s);
      j["ratio_to_dsekp"] = s.cpu_us_median / base;
      out["tls13"].push_back(j);
    }
    std::cout << out.dump(2) << "\n";
    return;
  }
  std::printf(
      "Handshake CPU cost (thread CPU time per handshake, device and edge/client and server in one "
      "thread)\n\n");
  std::printf("%-44s %10s %10s %10s %8s\n", "handshake", "median us", "mean us", "min us",
              "x DSEKP");
  const auto dsekp_row = [&](const char* label, const bench::DsekpHandshakeStats& s) {
    std::printf("%-44s %10.2f %10.2f %10.2f %8.2f\n", label, s.cpu_us_median, s.cpu_us_mean,
                s.cpu_us_min, s.cpu_us_median / base);
  };
  dsekp_row("DSEKP v1 (openssl both sides)", dsekp_openssl);
  dsekp_row("DSEKP v1 (openssl, + JSON encode/decode)", dsekp_openssl_json);
  dsekp_row("DSEKP v1 (mbedtls both sides)", dsekp_mbedtls);
  for (const auto& s : tls_stats) {
    std::printf("%-44s %10.2f %10.2f %10.2f %8.1f\n", bench::tls_mode_name(s.mode), s.cpu_us_median,
                s.cpu_us_mean, s.cpu_us_min, s.cpu_us_median / base);
  }
  std::printf("\nTLS groups: %s / %s / %s (ECDHE cert / psk_dhe_ke / psk_ke)\n",
              tls_stats[0].negotiated_group.c_str(), tls_stats[1].negotiated_group.c_str(),
              tls_stats[2].negotiated_group.c_str());
  std::printf("Target: TLS 1.3 ECDHE >= 100x DSEKP: %.0fx, %s\n", ecdhe_ratio,
              ecdhe_ratio >= 100 ? "met" : "NOT met");
}

void run_frames(const FramesOptions& options) {
  OpenSslCrypto openssl;
  OpenSslRng rng;
  const auto sizes = bench::measure_frame_sizes(openssl, rng);
  const auto costs = bench::measure_frame_costs(openssl, rng, options.frames, options.repetitions,
                                                options.devices);
  const double json_ratio = costs.edge_open_json_ns / costs.bare_gcm_open_ns;
  const double compact_ratio = costs.edge_open_compact_ns / costs.bare_gcm_open_ns;
  if (options.as_json) {
    json out = {{"reading", R"({"t":24.0,"h":51.0})"},
                {"dev_id", "esp32-01"},
                {"sizes_bytes",
                 {{"plaintext", sizes.plaintext},
                  {"psk_json", sizes.psk_json},
                  {"dsekp_json", sizes.dsekp_json},
                  {"dsekp_compact", sizes.dsekp_compact},
                  {"psk_compact", sizes.psk_compact},
                  {"paper_psk_json_mean", 154.8},
                  {"paper_dsekp_json_mean", 170.8}}},
                {"costs_ns_per_frame",
                 {{"backend", costs.backend},
                  {"frames_per_repetition", costs.frames},
                  {"bare_gcm_open", costs.bare_gcm_open_ns},
                  {"gcm_open_with_38_byte_aad", costs.gcm_open_with_aad_ns},
                  {"device_seal_json", costs.device_seal_json_ns},
                  {"edge_open_json", costs.edge_open_json_ns},
                  {"edge_open_json_portable_decoder", costs.edge_open_json_portable_ns},
                  {"edge_open_compact", costs.edge_open_compact_ns},
                  {"psk_open_json", costs.psk_open_json_ns}}},
                {"edge_open_json_over_floor", json_ratio},
                {"edge_open_compact_over_floor", compact_ratio},
                {"targets", {{"json_max", 3.0}, {"compact_max", 1.5}, {"compact_size_max", 64}}}};
    std::cout << out.dump(2) << "\n";
    return;
  }
  std::printf("Wire size of the reading %s (%zu bytes) from esp32-01\n\n", R"({"t":24.0,"h":51.0})",
              sizes.plaintext);
  std::printf("%-26s %6s   %s\n", "frame", "bytes", "paper (mean)");
  std::printf("%-26s %6zu   %s\n", "PSK JSON (baseline)", sizes.psk_json, "154.8");
  std::printf("%-26s %6zu   %s\n", "DSEKP JSON", sizes.dsekp_json, "170.8");
  std::printf("%-26s %6zu   %s\n", "DSEKP compact", sizes.dsekp_compact, "-  (target <= 64)");
  std::printf("%-26s %6zu   %s\n", "PSK compact", sizes.psk_compact, "-");
  std::printf(
      "\nPer-frame cost, backend %s, %zu devices registered, thread CPU ns per frame "
      "(median of %zu x %zu)\n\n",
      costs.backend.c_str(), options.devices, options.repetitions, costs.frames);
  std::printf("%-58s %8s %8s\n", "operation", "ns", "x floor");
  const auto row = [&](const char* label, double ns) {
    std::printf("%-58s %8.0f %8.2f\n", label, ns, ns / costs.bare_gcm_open_ns);
  };
  row("bare AES-128-GCM open, same plaintext (floor)", costs.bare_gcm_open_ns);
  row("AES-128-GCM open + the 38-byte DSEKP AAD", costs.gcm_open_with_aad_ns);
  row("device: seal + JSON encode", costs.device_seal_json_ns);
  row("edge: JSON parse+base64+lookup+decrypt+replay check", costs.edge_open_json_ns);
  row("  same, portable jsmn decoder instead of simdjson", costs.edge_open_json_portable_ns);
  row("edge: compact parse+lookup+decrypt+replay check", costs.edge_open_compact_ns);
  row("edge: PSK baseline JSON parse+decrypt", costs.psk_open_json_ns);
  std::printf(
      "\nTargets: JSON path <= 3x floor: %.2fx %s; compact <= 1.5x floor: %.2fx %s; "
      "compact size <= 64: %zu %s\n",
      json_ratio, json_ratio <= 3 ? "met" : "NOT met", compact_ratio,
      compact_ratio <= 1.5 ? "met" : "NOT met", sizes.dsekp_compact,
      sizes.dsekp_compact <= 64 ? "met" : "NOT met");
}

void run_sessions(const SessionsOptions& options) {
  OpenSslCrypto openssl;
  OpenSslRng rng;
  const bench::SessionsStats s = bench::measure_sessions(openssl, rng, options.bench);
  constexpr double kTarget = 256;
  const bool met = s.working_set_bytes_per_session <= kTarget;
  if (options.as_json) {
    json out = {{"devices", s.count},
                {"states", "real handshake + one DATA frame per device, own secret and keys"},
                {"backend", s.backend},
                {"sizeof",
                 {{"EdgeSession", s.sizeof_edge_session},
                  {"PendingSession", s.sizeof_pending_session},
                  {"EdgeDeviceState", s.sizeof_edge_device_state}}},
                {"working_set",
                 {{"representation", "CompactStateMap: encoded state per device, open addressing"},
                  {"encoded_state_bytes_mean", s.encoded_bytes_mean},
                  {"dev_id_bytes", s.dev_id_bytes},
                  {"table_slots", s.table_slots},
                  {"rss_growth_bytes", s.working_set_rss_bytes},
                  {"bytes_per_session", s.working_set_bytes_per_session},
                  {"target_bytes_per_session_max", kTarget},
                  {"target_met", met}}},
                {"naive_unordered_map_of_EdgeDeviceState",
                 {{"devices", s.naive_count}, {"bytes_per_session", s.naive_bytes_per_session}}},
                {"sqlite",
                 {{"synchronous", s.synchronous},
                  {"file_bytes", s.database_bytes},
                  {"bytes_per_session", s.database_bytes_per_session},
                  {"save_us_mean", s.save_us_mean},
                  {"saves_per_s", s.saves_per_s},
                  {"load_us_mean", s.load_us_mean},
                  {"loads_per_s", s.loads_per_s}}},
                {"codec_ns", {{"encode", s.encode_ns}, {"decode", s.decode_ns}}},
                {"create_s", s.create_s},
                {"total_s", s.total_s}};
    std::cout << out.dump(2) << "\n";
    return;
  }
  std::printf("Session state of %zu devices, one established session each (real handshake and\n",
              s.count);
  std::printf("one DATA frame per device, own secret and keys, backend %s)\n\n", s.backend.c_str());
  std::printf("sizeof: EdgeSession %zu, PendingSession %zu, EdgeDeviceState %zu bytes\n\n",
              s.sizeof_edge_session, s.sizeof_pending_session, s.sizeof_edge_device_state);
  std::printf("%-52s %12s\n", "memory (process RSS growth / devices)", "bytes/session");
  std::printf("%-52s %12.1f\n", "working set: encoded states, open addressing",
              s.working_set_bytes_per_session);
  std::printf("%-52s %12.1f\n", "  of which the encoded state (mean)", s.encoded_bytes_mean);
  std::printf("%-52s %12.1f\n", "  table slots (8 bytes each)",
              8.0 * static_cast<double>(s.table_slots) / static_cast<double>(s.count));
  const std::string naive_label =
      "reference: unordered_map<string, EdgeDeviceState>, " + std::to_string(s.naive_count);
  std::printf("%-52s %12.1f\n", naive_label.c_str(), s.naive_bytes_per_session);
  std::printf("\nSQLite store (WAL, synchronous=%s)\n", s.synchronous.c_str());
  std::printf("  file size after checkpoint: %llu bytes, %.1f bytes/session\n",
              static_cast<unsigned long long>(s.database_bytes), s.database_bytes_per_session);
  std::printf("  save, one transaction each: %8.2f us  (%8.0f /s)\n", s.save_us_mean,
              s.saves_per_s);
  std::printf("  load, random order, decode: %8.2f us  (%8.0f /s)\n", s.load_us_mean,
              s.loads_per_s);
  std::printf("\nCodec: encode %.0f ns, decode %.0f ns per state. Set-up %.1f s, total %.1f s.\n",
              s.encode_ns, s.decode_ns, s.create_s, s.total_s);
  std::printf("Target: <= %.0f bytes per session in memory: %.1f, %s\n", kTarget,
              s.working_set_bytes_per_session, met ? "met" : "NOT met");
}

}  // namespace

void add_bench_command(CLI::App& app) {
  CLI::App* bench = app.add_subcommand(
      "bench", "Measure handshake cost, frame sizes, per-frame cost, session state");
  bench->require_subcommand(1);

  auto handshake_options = std::make_shared<HandshakeOptions>();
  CLI::App* handshake = bench->add_subcommand(
      "handshake", "CPU cost of a DSEKP handshake beside TLS 1.3 (ECDHE+cert, psk_dhe_ke, psk_ke)");
  handshake->add_option("--iterations", handshake_options->iterations, "DSEKP handshakes to time")
      ->check(CLI::Range(25, 10'000'000));
  handshake
      ->add_option("--tls-iterations", handshake_options->tls_iterations,
                   "TLS handshakes to time per mode")
      ->check(CLI::Range(1, 1'000'000));
  handshake->add_flag("--json", handshake_options->as_json, "Print JSON instead of text");
  handshake->callback([handshake_options] { run_handshake(*handshake_options); });

  auto frames_options = std::make_shared<FramesOptions>();
  CLI::App* frames = bench->add_subcommand(
      "frames", "Wire sizes of the reference reading and per-frame seal/open cost");
  frames->add_option("--frames", frames_options->frames, "Frames per timed repetition")
      ->check(CLI::Range(100, 10'000'000));
  frames->add_option("--repetitions", frames_options->repetitions, "Timed repetitions")
      ->check(CLI::Range(1, 1000));
  frames->add_option("--devices", frames_options->devices, "Devices in the edge's lookup table")
      ->check(CLI::Range(0, 10'000'000));
  frames->add_flag("--json", frames_options->as_json, "Print JSON instead of text");
  frames->callback([frames_options] { run_frames(*frames_options); });

  auto sessions_options = std::make_shared<SessionsOptions>();
  CLI::App* sessions = bench->add_subcommand(
      "sessions", "Session state per device in memory (working set) and in the SQLite store");
  sessions->add_option("--count", sessions_options->bench.count, "Devices, one session each")
      ->check(CLI::Range(1, 10'000'000));
  sessions
      ->add_option("--dir", sessions_options->bench.directory,
                   "Directory for the database (default: a fresh temp directory)")
      ->check(CLI::ExistingDirectory);
  sessions->add_flag("--full-sync", sessions_options->bench.full_sync,
                     "PRAGMA synchronous=FULL (fsync per commit) instead of NORMAL");
  sessions->add_flag("--json", sessions_options->as_json, "Print JSON instead of text");
  sessions->callback([sessions_options] { run_sessions(*sessions_options); });
}

}  // namespace dsekp::cli
