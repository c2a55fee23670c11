// `dsekp bench handshake`, `dsekp bench frames`, `dsekp bench sessions`, the end-to-end
// `dsekp bench e2e` and `dsekp bench scale`, and `dsekp bench edge` (bench_edge_command.cpp)
// (see bench_command.hpp and docs/PERFORMANCE.md).
#include "bench_command.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/e2e/e2e_bench.hpp"
#include "bench/e2e/report.hpp"
#include "bench/e2e/scale_bench.hpp"
#include "bench_edge_command.hpp"
#include "bench_pipeline_command.hpp"
#include "crypto/mbedtls/mbedtls_crypto.hpp"
#include "crypto/openssl/openssl_crypto.hpp"
#include "dsekp_handshake_bench.hpp"
#include "edge/daemon/edge_daemon.hpp"
#include "experiment/interrupt.hpp"
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
          {"with_confirmation", s.confirmation},
          {"ratchet", s.ratchet},
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
      bench::measure_dsekp_handshake(openssl, openssl, rng, options.iterations, {});
  const auto dsekp_openssl_json = bench::measure_dsekp_handshake(
      openssl, openssl, rng, options.iterations, {.with_codec = true});
  const auto dsekp_mbedtls =
      bench::measure_dsekp_handshake(mbedtls, mbedtls, rng, options.iterations, {});
  // The ratchet (PROTOCOL.md 6.6): a session to its first DATA frame without and with it; the
  // difference is one step on each side. And one step alone, per backend.
  const auto confirmed_openssl = bench::measure_dsekp_handshake(
      openssl, openssl, rng, options.iterations, {.confirmation = true});
  const auto ratchet_openssl =
      bench::measure_dsekp_handshake(openssl, openssl, rng, options.iterations, {.ratchet = true});
  const auto confirmed_mbedtls = bench::measure_dsekp_handshake(
      mbedtls, mbedtls, rng, options.iterations, {.confirmation = true});
  const auto ratchet_mbedtls =
      bench::measure_dsekp_handshake(mbedtls, mbedtls, rng, options.iterations, {.ratchet = true});
  const double step_openssl_ns = bench::measure_ratchet_step_ns(openssl, options.iterations * 4);
  const double step_mbedtls_ns = bench::measure_ratchet_step_ns(mbedtls, options.iterations * 4);

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
        {"ratchet",
         {{"sessions",
           {to_json(confirmed_openssl), to_json(ratchet_openssl), to_json(confirmed_mbedtls),
            to_json(ratchet_mbedtls)}},
          {"step_ns", {{"openssl", step_openssl_ns}, {"mbedtls", step_mbedtls_ns}}},
          {"extra_us_per_session_both_sides",
           {{"openssl", ratchet_openssl.cpu_us_median - confirmed_openssl.cpu_us_median},
            {"mbedtls", ratchet_mbedtls.cpu_us_median - confirmed_mbedtls.cpu_us_median}}}}},
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

  std::printf("\nThe ratchet (PROTOCOL.md 6.6): a session to its first DATA frame, both sides\n\n");
  std::printf("%-44s %10s %10s %10s\n", "session", "median us", "mean us", "min us");
  const auto session_row = [&](const char* label, const bench::DsekpHandshakeStats& s) {
    std::printf("%-44s %10.2f %10.2f %10.2f\n", label, s.cpu_us_median, s.cpu_us_mean,
                s.cpu_us_min);
  };
  session_row("v1 (openssl both sides)", confirmed_openssl);
  session_row("ratchet (openssl both sides)", ratchet_openssl);
  session_row("v1 (mbedtls both sides)", confirmed_mbedtls);
  session_row("ratchet (mbedtls both sides)", ratchet_mbedtls);
  std::printf(
      "One ratchet step (derive_next_secret): openssl %.0f ns, mbedtls %.0f ns; each side "
      "takes one per session (the edge one more per look-ahead step of an INIT).\n",
      step_openssl_ns, step_mbedtls_ns);
}

void run_frames(const FramesOptions& options) {
  OpenSslCrypto openssl;
  OpenSslRng rng;
  const auto sizes = bench::measure_frame_sizes(openssl, rng);
  const auto costs = bench::measure_frame_costs(openssl, rng, options.frames, options.repetitions,
                                                options.devices);
  // Paired with a floor measured a moment before each repetition (frames_bench.hpp).
  const double json_ratio = costs.edge_open_json_over_floor;
  const double compact_ratio = costs.edge_open_compact_over_floor;
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
      "\nTargets (each path's repetitions paired with floor opens timed just before them, the "
      "median ratio):\n  JSON path <= 3x floor: %.2fx %s; compact <= 1.5x floor: %.2fx %s; "
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

struct E2eCliOptions {
  bench::e2e::E2eOptions bench;
  bool as_json = false;
};

struct ScaleCliOptions {
  bench::e2e::ScaleOptions bench;
  bool as_json = false;
};

/// Runs an end-to-end measurement and exits: 0 once measured (whether or not the targets were
/// met: the output says), 1 if it failed, 2 for bad options, 130 on Ctrl-C / SIGTERM (every child
/// stopped first).
template <typename Options, typename Run, typename Text, typename Json>
[[noreturn]] void run_end_to_end(const char* name, const Options& options, bool as_json, Run run,
                                 Text text, Json to_json_fn) {
  const auto say = [name](const std::string& line) {
    std::fprintf(stderr, "dsekp bench %s: %s\n", name, line.c_str());
    std::fflush(stderr);
  };
  int code = 0;
  {
    experiment::InterruptGuard guard;
    try {
      const auto result = run(options, say);
      if (as_json) {
        std::cout << to_json_fn(result).dump(2) << "\n";
      } else {
        std::cout << text(result);
      }
    } catch (const std::invalid_argument& e) {
      say(e.what());
      code = 2;
    } catch (const experiment::Interrupted& interrupted) {
      say(std::string("interrupted (") + ::strsignal(interrupted.signal) +
          "); every process it started was stopped");
      code = 130;
    } catch (const std::exception& e) {
      say(std::string("failed: ") + e.what());
      code = 1;
    }
  }
  std::cout.flush();
  std::fflush(nullptr);
  std::exit(code);
}

void add_common_e2e_options(CLI::App* cmd, std::string& dir, bool& keep, std::string& mosquitto,
                            std::string& encoding, int& qos, std::uint64_t& seed, bool& as_json) {
  cmd->add_option("--encoding", encoding, "Frame encoding")
      ->check(CLI::IsMember({"json", "compact"}))
      ->capture_default_str();
  cmd->add_option("--qos", qos, "MQTT QoS of every publish")
      ->check(CLI::IsMember({0, 1}))
      ->capture_default_str();
  cmd->add_option("--seed", seed, "Seed of the devices' sensor model and start offsets")
      ->capture_default_str();
  cmd->add_option("--dir", dir,
                  "Working folder for logs, broker and edge files (new or empty; kept). Default: "
                  "a temporary folder, removed after a successful run");
  cmd->add_flag("--keep", keep, "Keep the temporary working folder");
  cmd->add_option("--mosquitto", mosquitto,
                  "Mosquitto executable (default: /usr/sbin, /usr/local/sbin, PATH)");
  cmd->add_flag("--json", as_json, "Print JSON instead of text");
}

}  // namespace

void add_bench_command(CLI::App& app) {
  CLI::App* bench = app.add_subcommand(
      "bench",
      "Measure handshake cost, frame sizes, per-frame cost, session state, end-to-end latency and "
      "scale");
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

  auto e2e_options = std::make_shared<E2eCliOptions>();
  auto& e = e2e_options->bench;
  CLI::App* e2e = bench->add_subcommand(
      "e2e",
      "PSK vs DSEKP send-to-edge latency and INIT->ACK handshake latency on a private broker and "
      "edge at a fixed load");
  e2e->add_option("--devices", e.devices, "Simulated devices per mode")
      ->check(CLI::Range(1, 60'000))
      ->capture_default_str();
  e2e->add_option("--frames", e.frames, "DATA frames per device and mode")
      ->check(CLI::Range(1, 10'000'000))
      ->capture_default_str();
  e2e->add_option("--interval-ms", e.interval_ms,
                  "Interval between a device's frames (100 devices x 50 ms = 2,000 frames/s)")
      ->check(CLI::Range(1, 3'600'000))
      ->capture_default_str();
  e2e->add_option("--rounds", e.rounds,
                  "PSK and DSEKP runs per mode, alternating (evens out changes in machine load)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  e2e->add_option("--handshakes", e.handshakes,
                  "Handshakes timed by the probe device, idle and again under the DSEKP load "
                  "(0: no probe)")
      ->check(CLI::Range(0, 100'000))
      ->capture_default_str();
  e2e->add_option("--batch-wait-ms", e.batch_wait_ms,
                  "The edge's --batch-wait-ms (a burst owing no answer waits for more messages)")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  e2e->add_option("--mqtt-client", e.mqtt_client, "The edge's --mqtt-client (default: its own)")
      ->check(CLI::IsMember(std::vector<std::string>(edge::daemon::kMqttClients.begin(),
                                                     edge::daemon::kMqttClients.end())));
  add_common_e2e_options(e2e, e.dir, e.keep, e.mosquitto, e.encoding, e.qos, e.seed,
                         e2e_options->as_json);
  e2e->callback([e2e_options] {
    run_end_to_end("e2e", e2e_options->bench, e2e_options->as_json, bench::e2e::run_e2e,
                   bench::e2e::e2e_text, bench::e2e::e2e_json);
  });

  auto scale_options = std::make_shared<ScaleCliOptions>();
  auto& sc = scale_options->bench;
  CLI::App* scale = bench->add_subcommand(
      "scale",
      "Many devices at once on one broker (or a 3-node cluster) and one to three edges: delivery "
      "ratio, throughput, CPU and memory, Redis work per frame");
  scale->add_option("--devices", sc.devices, "Simulated devices, all connected at once")
      ->check(CLI::Range(1, 60'000))
      ->capture_default_str();
  scale->add_option("--interval-ms", sc.interval_ms, "Interval between a device's frames")
      ->check(CLI::Range(1, 3'600'000))
      ->capture_default_str();
  scale
      ->add_option("--duration-s", sc.duration_s,
                   "Seconds of sending after the connection ramp (devices / --connect-rate)")
      ->check(CLI::Range(1.0, 86'400.0))
      ->capture_default_str();
  scale->add_option("--connect-rate", sc.connect_rate, "New device connections per second")
      ->check(CLI::Range(1.0, 1e6))
      ->capture_default_str();
  scale->add_option("--mode", sc.mode, "Protocol of the devices")
      ->check(CLI::IsMember({"dsekp", "psk"}))
      ->capture_default_str();
  scale
      ->add_option("--rss-every-s", sc.rss_every_s,
                   "Soak: print the edge's and the broker's RSS every N seconds and judge whether "
                   "the edge's stays flat after a warm-up (0: off)")
      ->check(CLI::Range(0.0, 86'400.0))
      ->capture_default_str();
  scale
      ->add_option("--edges", sc.edges,
                   "Edges in one shared subscription group (more than one needs --store redis)")
      ->check(CLI::Range(1, 3))
      ->capture_default_str();
  scale
      ->add_option("--store", sc.store,
                   "Session store: sqlite (per edge) or redis (a private redis-server shared by "
                   "the edges; Redis commands and round trips per frame are reported)")
      ->check(CLI::IsMember({"sqlite", "redis"}))
      ->capture_default_str();
  scale->add_flag("--cluster", sc.cluster,
                  "A clustered tier instead: 3 RabbitMQ nodes (devices on MQTT, one fleet per "
                  "node; edges on AMQP) and a Redis Cluster of 3 primaries + 3 replicas as the "
                  "store; every node's CPU and memory, and the cost per 1,000 frames/s");
  add_common_e2e_options(scale, sc.dir, sc.keep, sc.mosquitto, sc.encoding, sc.qos, sc.seed,
                         scale_options->as_json);
  scale->callback([scale_options] {
    run_end_to_end("scale", scale_options->bench, scale_options->as_json, bench::e2e::run_scale,
                   bench::e2e::scale_text, bench::e2e::scale_json);
  });

  add_bench_edge_command(*bench);
  add_bench_pipeline_command(*bench);
}

}  // namespace dsekp::cli
