// The `--link` SPEC parser: every key, every unit, every error (which must name the key and the
// value), the canonical text, and HOST:PORT splitting.
#include <gtest/gtest.h>

#include <string>

#include "linkemu/host_port.hpp"
#include "linkemu/link_spec.hpp"

namespace dsekp::linkemu {
namespace {

using namespace std::chrono_literals;

LinkSpec parse_ok(const std::string& text) {
  const LinkSpecResult r = parse_link_spec(text);
  EXPECT_TRUE(r.ok()) << text << ": " << r.error;
  return r.spec.value_or(LinkSpec{});
}

std::string parse_error(const std::string& text) {
  const LinkSpecResult r = parse_link_spec(text);
  EXPECT_FALSE(r.ok()) << text << " was accepted";
  return r.error;
}

TEST(LinkSpecParse, EmptyAndNoneArePureRelay) {
  for (const char* text : {"", "none", "  none "}) {
    const LinkSpec s = parse_ok(text);
    EXPECT_EQ(s, LinkSpec{});
    EXPECT_TRUE(s.pure_relay());
  }
}

TEST(LinkSpecParse, TheIssueExample) {
  const LinkSpec s = parse_ok("delay=250ms,jitter=80ms,stall=0.5%");
  EXPECT_EQ(s.delay, 250ms);
  EXPECT_EQ(s.jitter, 80ms);
  EXPECT_DOUBLE_EQ(s.stall, 0.005);
  EXPECT_EQ(s.stall_time, 1s);  // the default
  EXPECT_FALSE(s.pure_relay());
}

TEST(LinkSpecParse, EveryKey) {
  const LinkSpec s = parse_ok(
      "delay=10ms, jitter=2ms ,dist=pareto,rate=1mbit,burst=3000,stall=1%,stall_time=200ms,"
      "drop=0.001,drop_mode=fin,queue=64KiB");
  EXPECT_EQ(s.delay, 10ms);
  EXPECT_EQ(s.jitter, 2ms);
  EXPECT_EQ(s.distribution, DelayDistribution::pareto);
  EXPECT_EQ(s.rate_bits_per_s, 1'000'000u);
  EXPECT_EQ(s.burst_bytes, 3000u);
  EXPECT_DOUBLE_EQ(s.stall, 0.01);
  EXPECT_EQ(s.stall_time, 200ms);
  EXPECT_DOUBLE_EQ(s.drop, 0.001);
  EXPECT_EQ(s.drop_mode, DropMode::fin);
  EXPECT_EQ(s.queue_bytes, 65536u);
}

TEST(LinkSpecParse, TimeUnits) {
  EXPECT_EQ(parse_ok("delay=500us").delay, 500us);
  EXPECT_EQ(parse_ok("delay=1.5ms").delay, 1500us);
  EXPECT_EQ(parse_ok("delay=2s").delay, 2s);
  EXPECT_EQ(parse_ok("delay=0.25s").delay, 250ms);
  EXPECT_EQ(parse_ok("delay=0").delay, 0us);
  EXPECT_EQ(parse_ok("jitter=1e3us").jitter, 1ms);
}

TEST(LinkSpecParse, RateUnits) {
  EXPECT_EQ(parse_ok("rate=9600bit").rate_bits_per_s, 9600u);
  EXPECT_EQ(parse_ok("rate=500kbit").rate_bits_per_s, 500'000u);
  EXPECT_EQ(parse_ok("rate=500Kbit").rate_bits_per_s, 500'000u);
  EXPECT_EQ(parse_ok("rate=1.5mbit").rate_bits_per_s, 1'500'000u);
  EXPECT_EQ(parse_ok("rate=8Mbit/s").rate_bits_per_s, 8'000'000u);
  EXPECT_EQ(parse_ok("rate=1gbit").rate_bits_per_s, 1'000'000'000u);
  // Bytes per second, SI.
  EXPECT_EQ(parse_ok("rate=100B").rate_bits_per_s, 800u);
  EXPECT_EQ(parse_ok("rate=125kB/s").rate_bits_per_s, 1'000'000u);
  EXPECT_EQ(parse_ok("rate=125KB").rate_bits_per_s, 1'000'000u);
  EXPECT_EQ(parse_ok("rate=1MB/s").rate_bits_per_s, 8'000'000u);
  EXPECT_EQ(parse_ok("rate=1GB").rate_bits_per_s, 8'000'000'000u);
}

TEST(LinkSpecParse, SizeUnits) {
  EXPECT_EQ(parse_ok("queue=4096").queue_bytes, 4096u);
  EXPECT_EQ(parse_ok("queue=4096B").queue_bytes, 4096u);
  EXPECT_EQ(parse_ok("queue=64kB").queue_bytes, 64'000u);
  EXPECT_EQ(parse_ok("queue=64KB").queue_bytes, 64'000u);
  EXPECT_EQ(parse_ok("queue=2MB").queue_bytes, 2'000'000u);
  EXPECT_EQ(parse_ok("queue=64KiB").queue_bytes, 65'536u);
  EXPECT_EQ(parse_ok("queue=1MiB").queue_bytes, 1'048'576u);
  EXPECT_EQ(parse_ok("burst=0").burst_bytes, 0u);
  EXPECT_EQ(parse_ok("burst=1.5kB").burst_bytes, 1500u);
}

TEST(LinkSpecParse, Probabilities) {
  EXPECT_DOUBLE_EQ(parse_ok("drop=0.5%").drop, 0.005);
  EXPECT_DOUBLE_EQ(parse_ok("drop=0.005").drop, 0.005);
  EXPECT_DOUBLE_EQ(parse_ok("drop=100%").drop, 1.0);
  EXPECT_DOUBLE_EQ(parse_ok("drop=1").drop, 1.0);
  EXPECT_DOUBLE_EQ(parse_ok("stall=0%").stall, 0.0);
}

TEST(LinkSpecParse, NamedValues) {
  EXPECT_EQ(parse_ok("dist=normal").distribution, DelayDistribution::normal);
  EXPECT_EQ(parse_ok("delay=1ms,jitter=1ms,dist=lognormal").distribution,
            DelayDistribution::lognormal);
  EXPECT_EQ(parse_ok("drop_mode=rst").drop_mode, DropMode::rst);
  EXPECT_EQ(parse_ok("drop_mode=blackhole").drop_mode, DropMode::blackhole);
}

struct ErrorCase {
  const char* text;
  const char* expected;  // the error must contain this
};

TEST(LinkSpecParse, ErrorsNameTheKeyAndTheValue) {
  const ErrorCase cases[] = {
      {"delay=abc", "delay: \"abc\" is not a duration"},
      {"delay=250", "delay: \"250\" needs a unit"},
      {"delay=25xs", "delay: \"25xs\" has an unknown time unit"},
      {"delay=-5ms", "delay: \"-5ms\" must not be negative"},
      {"delay=2h", "delay: \"2h\" has an unknown time unit"},
      {"delay=7200s", "delay: \"7200s\" is longer than one hour"},
      {"delay=nan", "delay: \"nan\" is not a duration"},
      {"jitter=inf", "jitter: \"inf\" is not a duration"},
      {"stall_time=1min", "stall_time: \"1min\" has an unknown time unit"},
      {"rate=fast", "rate: \"fast\" is not a rate"},
      {"rate=1000", "rate: \"1000\" needs a unit"},
      {"rate=1mb", "rate: \"1mb\" has an unknown rate unit"},
      {"rate=1mbps", "rate: \"1mbps\" has an unknown rate unit"},
      {"rate=0mbit", "rate: \"0mbit\" must be at least 1bit"},
      {"rate=-1mbit", "rate: \"-1mbit\" must not be negative"},
      {"rate=2000gbit", "rate: \"2000gbit\" is above 1000gbit"},
      {"queue=big", "queue: \"big\" is not a size"},
      {"queue=0", "queue: \"0\" must be at least 1 byte"},
      {"queue=1.5", "queue: \"1.5\" is not a whole number of bytes"},
      {"queue=10GB", "queue: \"10GB\" has an unknown size unit"},
      {"queue=2048MiB", "queue: \"2048MiB\" is larger than 1GiB"},
      {"burst=-1", "burst: \"-1\" must not be negative"},
      {"burst=1kb", "burst: \"1kb\" has an unknown size unit"},
      {"stall=150%", "stall: \"150%\" is not between 0 and 100%"},
      {"stall=1.5", "stall: \"1.5\" is not between 0 and 100%"},
      {"stall=-1%", "stall: \"-1%\" is not between 0 and 100%"},
      {"drop=often", "drop: \"often\" is not a probability"},
      {"drop=5x", "drop: \"5x\" is not a probability"},
      {"dist=gauss", "dist: \"gauss\" is not a distribution"},
      {"jitter=5ms,dist=lognormal", "dist: \"lognormal\" needs delay > 0"},
      {"jitter=5ms,dist=pareto", "dist: \"pareto\" needs delay > 0"},
      {"drop_mode=close", "drop_mode: \"close\" is not a drop mode"},
      {"loss=1%", "loss: \"1%\" cannot be emulated"},
      {"latency=5ms", "unknown key \"latency\""},
      {"delay", "\"delay\" is not key=value"},
      {"delay=", "delay: has no value"},
      {"delay=1ms,delay=2ms", "delay: given twice"},
      {"delay=1ms,", "empty item"},
      {",delay=1ms", "empty item"},
  };
  for (const ErrorCase& c : cases) {
    const std::string error = parse_error(c.text);
    EXPECT_NE(error.find(c.expected), std::string::npos)
        << "spec " << c.text << "\n  error    " << error << "\n  expected " << c.expected;
  }
}

TEST(LinkSpecFormat, RoundTripsAndListsOnlyChangedKeys) {
  EXPECT_EQ(format_link_spec(LinkSpec{}), "none");
  EXPECT_EQ(format_link_spec(parse_ok("delay=250ms,jitter=80ms,stall=0.5%")),
            "delay=250ms,jitter=80ms,stall=0.005");
  EXPECT_EQ(format_link_spec(parse_ok("rate=125kB/s,burst=1.5kB")), "rate=1mbit,burst=1500");
  EXPECT_EQ(format_link_spec(parse_ok("rate=1.5mbit")), "rate=1500kbit");
  EXPECT_EQ(format_link_spec(parse_ok("rate=1001bit")), "rate=1001bit");
  EXPECT_EQ(format_link_spec(parse_ok("rate=2gbit")), "rate=2gbit");
  for (const char* text :
       {"delay=250ms,jitter=80ms,stall=0.5%", "delay=1500us,rate=1.5mbit,burst=1500",
        "delay=1s,jitter=333us,dist=lognormal,stall=0.1,stall_time=2s,drop=1e-4,drop_mode="
        "blackhole,queue=1MiB",
        "rate=125kB,dist=pareto,delay=3ms,jitter=1ms"}) {
    const LinkSpec s = parse_ok(text);
    const std::string canonical = format_link_spec(s);
    EXPECT_EQ(parse_ok(canonical), s) << text << " -> " << canonical;
  }
}

TEST(HostPort, Forms) {
  HostPort hp;
  std::string error;
  ASSERT_TRUE(parse_host_port("127.0.0.1:1883", false, hp, error)) << error;
  EXPECT_EQ(hp.host, "127.0.0.1");
  EXPECT_EQ(hp.port, 1883);
  ASSERT_TRUE(parse_host_port("localhost:0", true, hp, error)) << error;
  EXPECT_EQ(hp.host, "localhost");
  EXPECT_EQ(hp.port, 0);
  ASSERT_TRUE(parse_host_port("[::1]:8883", false, hp, error)) << error;
  EXPECT_EQ(hp.host, "::1");
  EXPECT_EQ(hp.port, 8883);
}

TEST(HostPort, Errors) {
  HostPort hp;
  for (const char* text : {"127.0.0.1", ":1883", "host:", "host:abc", "host:65536", "host:-1",
                           "::1:1883", "[::1:1883", "[]:1"}) {
    std::string error;
    EXPECT_FALSE(parse_host_port(text, true, hp, error)) << text;
    EXPECT_NE(error.find(text), std::string::npos) << error;
  }
  std::string error;
  EXPECT_FALSE(parse_host_port("127.0.0.1:0", false, hp, error));
  EXPECT_NE(error.find("1..65535"), std::string::npos) << error;
}

}  // namespace
}  // namespace dsekp::linkemu
