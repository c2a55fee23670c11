// The analysis driver (see analysis.hpp).
#include "analysis.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <map>
#include <thread>

#include "error.hpp"

namespace dsekp::analyze {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Runs the tasks on up to `threads` threads; the first exception (in task order) is rethrown.
// Each file is parsed by one thread, so the two cores of the reference machine read two logs at
// once.
void run_parallel(std::vector<std::function<void()>>& tasks, unsigned threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = std::min<unsigned>(threads, static_cast<unsigned>(tasks.size()));
  std::vector<std::exception_ptr> errors(tasks.size());
  std::atomic<std::size_t> next{0};
  const auto worker = [&] {
    for (std::size_t i = next++; i < tasks.size(); i = next++) {
      try {
        tasks[i]();
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& thread : pool) thread.join();
  for (const auto& error : errors)
    if (error) std::rethrow_exception(error);
}

struct RunData {
  ServerLogData server;
  std::optional<ClientLogData> client;
};

// Gives every (run, dev_id) of a mode one stream index, the top 16 bits of its packet keys.
class StreamTable {
 public:
  std::vector<std::uint16_t> map_run(std::size_t run, const std::vector<std::string>& devices) {
    std::vector<std::uint16_t> local_to_stream;
    for (const auto& dev_id : devices) {
      const auto [it, added] = index_.try_emplace({run, dev_id}, names_.size());
      if (added) {
        if (names_.size() >= 65536)
          throw AnalyzeError("more than 65,536 (run, dev_id) pairs in one mode (not supported)");
        names_.push_back(dev_id);
      }
      local_to_stream.push_back(static_cast<std::uint16_t>(it->second));
    }
    return local_to_stream;
  }
  const std::vector<std::string>& names() const { return names_; }

 private:
  std::map<std::pair<std::size_t, std::string>, std::size_t> index_;
  std::vector<std::string> names_;
};

// Moves `from` to the end of `to`; the first one is moved whole, so a single run costs no copy
// (peak memory stays at one copy of the per-row numbers).
template <typename T>
void append(std::vector<T>& to, std::vector<T>& from) {
  if (to.empty()) {
    to = std::move(from);
  } else {
    to.insert(to.end(), from.begin(), from.end());
  }
  from.clear();
  from.shrink_to_fit();
}

std::uint64_t stream_key(std::uint64_t key, const std::vector<std::uint16_t>& to_stream) {
  constexpr std::uint64_t kLow48 = (std::uint64_t{1} << 48) - 1;
  return (std::uint64_t{to_stream[key_device(key)]} << 48) | (key & kLow48);
}

void remap_keys(std::vector<std::uint64_t>& keys, const std::vector<std::uint16_t>& to_stream,
                std::vector<std::uint64_t>& out) {
  for (std::uint64_t& key : keys) key = stream_key(key, to_stream);
  append(out, keys);
}

void remap_micros(std::vector<MicroStamp>& stamps, const std::vector<std::uint16_t>& to_stream,
                  std::vector<MicroStamp>& out) {
  for (MicroStamp& stamp : stamps) stamp.key = stream_key(stamp.key, to_stream);
  append(out, stamps);
}

MicroFileReport micros_report(const FileReport& file) {
  return {file.path, file.kind, file.micros_bad_rows, file.first_micros_bad_rows};
}

ModeResult combine_mode(Mode mode, std::vector<RunData>& runs, const AnalysisOptions& options) {
  ModeResult result;
  result.mode = mode;
  result.runs = runs.size();

  StreamTable streams;
  std::vector<std::uint64_t> client_keys;
  std::vector<std::uint64_t> server_keys;
  PayloadHistogram client_payload;
  MicroLatencyResult micros;
  micros.runs = runs.size();
  std::vector<MicroStamp> client_micros;
  std::vector<MicroStamp> server_micros;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    RunData& run = runs[r];
    result.latency.rows += run.server.latencies_ms.size();
    result.latency.negative += run.server.negative_latencies;
    append(result.latency.sorted, run.server.latencies_ms);
    result.payload.merge(run.server.payload);
    result.bins.push_back(std::move(run.server.bins));
    if (run.client) {
      // Only runs with a client log count towards reliability: without one, nothing says what
      // was sent.
      ++result.reliability_runs;
      const auto server_streams = streams.map_run(r, run.server.devices);
      const auto client_streams = streams.map_run(r, run.client->devices);
      if (run.server.report.has_micros && run.client->report.has_micros) {
        // The µs table needs both stamps of a packet, so only runs with both columns enter it.
        ++micros.runs_with_columns;
        micros.server_rows += run.server.keys.size();
        micros.bad_recvts_us += run.server.report.micros_bad_rows;
        micros.bad_client_rows += run.client->report.micros_bad_rows;
        micros.files.push_back(micros_report(run.server.report));
        micros.files.push_back(micros_report(run.client->report));
        remap_micros(run.server.micros, server_streams, server_micros);
        remap_micros(run.client->micros, client_streams, client_micros);
      }
      remap_keys(run.server.keys, server_streams, server_keys);
      remap_keys(run.client->keys, client_streams, client_keys);
      client_payload.merge(run.client->payload);
    }
  }
  result.latency.outliers_excluded = apply_outlier_rule(result.latency.sorted, options.outlier_ms);
  std::sort(result.latency.sorted.begin(), result.latency.sorted.end());
  result.latency.stats = describe_sorted(result.latency.sorted);
  result.payload_summary = result.payload.summary();
  result.client_payload_summary = client_payload.summary();
  result.throughput = summarize_throughput(result.bins, result.payload_summary.total_bytes);
  if (result.reliability_runs > 0)
    result.reliability = compute_reliability(client_keys, server_keys, streams.names());
  if (micros.runs_with_columns > 0) {
    join_micro_latencies(client_micros, server_micros, micros);
    finish_micro_latencies(micros, options.outlier_ms);
    result.latency_us = std::move(micros);
  }
  return result;
}

}  // namespace

std::uint64_t apply_outlier_rule(std::vector<double>& latencies_ms, double outlier_ms) {
  if (outlier_ms <= 0) return 0;
  return static_cast<std::uint64_t>(
      std::erase_if(latencies_ms, [outlier_ms](double v) { return v > outlier_ms; }));
}

Comparison compare_modes(const ModeResult& psk, const ModeResult& dsekp) {
  Comparison c;
  const std::span<const double> a = psk.latency.sorted;
  const std::span<const double> b = dsekp.latency.sorted;
  c.t_test = welch_t_test(a, b);
  c.rank_sum = wilcoxon_rank_sum(a, b);
  c.cohens_d = cohens_d(a, b);
  c.cliffs_delta = cliffs_delta(a, b);
  const auto& sa = psk.latency.stats;
  const auto& sb = dsekp.latency.stats;
  if (sa.mean && sb.mean && *sa.mean != 0)
    c.mean_latency_change_pct = (*sb.mean - *sa.mean) / *sa.mean * 100.0;
  if (sa.median && sb.median) c.median_shift_ms = *sb.median - *sa.median;
  c.payload_overhead_pct = payload_overhead_pct(psk.payload_summary, dsekp.payload_summary);
  return c;
}

AnalysisResult analyze_logs(const AnalysisInputs& inputs, const AnalysisOptions& options) {
  AnalysisResult result;
  result.options = options;
  const ReadOptions read_options{options.bad_rows_listed};

  std::vector<RunData> psk_runs(inputs.psk.size());
  std::vector<RunData> dsekp_runs(inputs.dsekp.size());
  std::vector<HandshakeLogData> handshake_logs(inputs.handshakes.size());
  std::vector<std::function<void()>> tasks;
  const auto add_runs = [&](Mode mode, const std::vector<RunFiles>& files,
                            std::vector<RunData>& runs) {
    for (std::size_t i = 0; i < files.size(); ++i) {
      tasks.emplace_back(
          [&, mode, i] { runs[i].server = read_server_log(files[i].server, mode, read_options); });
      if (files[i].client)
        tasks.emplace_back([&, mode, i] {
          runs[i].client = read_client_log(*files[i].client, mode, read_options);
        });
    }
  };
  add_runs(Mode::psk, inputs.psk, psk_runs);
  add_runs(Mode::dsekp, inputs.dsekp, dsekp_runs);
  for (std::size_t i = 0; i < inputs.handshakes.size(); ++i)
    tasks.emplace_back(
        [&, i] { handshake_logs[i] = read_handshake_log(inputs.handshakes[i], read_options); });

  const auto start = Clock::now();
  run_parallel(tasks, options.threads);
  result.seconds_reading = seconds_since(start);

  const auto computing = Clock::now();
  for (auto* runs : {&psk_runs, &dsekp_runs}) {
    for (const auto& run : *runs) {
      result.files.push_back(run.server.report);
      if (run.client) result.files.push_back(run.client->report);
    }
  }
  for (const auto& log : handshake_logs) result.files.push_back(log.report);
  for (const auto& file : result.files) result.bad_rows += file.bad_rows;

  if (!psk_runs.empty()) result.psk = combine_mode(Mode::psk, psk_runs, options);
  if (!dsekp_runs.empty()) result.dsekp = combine_mode(Mode::dsekp, dsekp_runs, options);
  if (result.psk && result.dsekp) result.comparison = compare_modes(*result.psk, *result.dsekp);
  if (result.psk && result.psk->latency_us && result.dsekp && result.dsekp->latency_us)
    result.latency_us_comparison =
        compare_micro_latencies(*result.psk->latency_us, *result.dsekp->latency_us);
  if (!handshake_logs.empty()) result.handshakes = summarize_handshakes(handshake_logs);
  result.seconds_computing = seconds_since(computing);
  return result;
}

}  // namespace dsekp::analyze
