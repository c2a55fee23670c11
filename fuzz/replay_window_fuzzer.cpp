// libFuzzer target: dsekp::ReplayWindow against a reference model written from the rule in
// docs/PROTOCOL.md 6.3 step 3, with the plainest data structure (a std::set of accepted seqs):
//   seq >= highest accepted + 1 (or nothing accepted yet)  -> ok, and it becomes the highest
//   highest - seq >= W                                     -> too_old
//   seq accepted before                                    -> replay
//   otherwise                                              -> ok
// (A seq that is both accepted and too old is too_old: the window no longer knows it.)
// The input picks the window size (0 and values above kMaxSize test the clamping) and then a
// sequence of seqs: relative to the top (behind it, at it, just past it, far ahead), absolute,
// and near the end of the seq space; check() without accept(); and persistence: a second window
// restored from the first's top()/bitmap(), or read back from the Redis store's window field
// (edge/store/redis/redis_window_field.hpp), must behave identically from then on; and arbitrary
// bytes given to the field decoder must not crash it.
// Any difference in a verdict, in top() or in size() aborts.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "dsekp/replay_window.hpp"
#include "edge/store/redis/redis_window_field.hpp"
#include "fuzz_support.hpp"

namespace {

using namespace dsekp;

class Model {
 public:
  explicit Model(std::uint32_t size) : size_(size) {}

  [[nodiscard]] Error check(std::uint32_t seq) const {
    if (seq >= top_) return Error::ok;
    if (top_ - 1 - seq >= size_) return Error::too_old;
    return accepted_.count(seq) != 0 ? Error::replay : Error::ok;
  }
  Error accept(std::uint32_t seq) {
    const Error e = check(seq);
    if (e != Error::ok) return e;
    accepted_.insert(seq);
    if (seq >= top_) top_ = std::uint64_t{seq} + 1;
    // Forget what left the window, so the model stays small (it can never matter again).
    while (!accepted_.empty() && top_ - 1 - *accepted_.begin() >= size_) {
      accepted_.erase(accepted_.begin());
    }
    return Error::ok;
  }
  [[nodiscard]] std::uint64_t top() const { return top_; }

 private:
  std::set<std::uint32_t> accepted_;
  std::uint64_t top_ = 0;
  std::uint32_t size_;
};

std::string describe(const char* op, std::uint32_t seq, Error got, Error want, std::uint64_t top,
                     std::uint32_t size) {
  return std::string(op) + " seq=" + std::to_string(seq) + " got=" + error_name(got) +
         " model=" + error_name(want) + " top=" + std::to_string(top) +
         " size=" + std::to_string(size);
}

// The next seq the input asks for.
std::uint32_t next_seq(fuzz::ByteReader& in, std::uint64_t top, std::uint8_t mode) {
  const auto clamp32 = [](std::uint64_t v) {
    return static_cast<std::uint32_t>(v > UINT32_MAX ? UINT32_MAX : v);
  };
  switch (mode) {
    case 0: {  // behind the top, by up to 255 (the interesting region of small windows)
      const std::uint64_t back = in.u8();
      return top > back ? clamp32(top - 1 - back) : in.u8();
    }
    case 1: {  // behind the top, by up to 65535 (large windows, far left of small ones)
      const std::uint64_t back = in.u16();
      return top > back ? clamp32(top - 1 - back) : in.u16();
    }
    case 2:  // at or just past the top
      return clamp32(top + in.pick(4));
    case 3:  // far ahead
      return clamp32(top + in.u16() + 1);
    case 4:  // anywhere
      return in.u32();
    default:  // the end of the seq space
      return UINT32_MAX - in.u8();
  }
}

// Arbitrary bytes as a stored window field (what a Redis with foreign or corrupt content
// returns): decoding must not fail badly, and a field it accepts must read back the same after
// writing it again.
void decode_any_field(fuzz::ByteReader& in, std::uint32_t w) {
  namespace r = dsekp::edge::redis;
  std::string value;
  const std::size_t length = in.u8() % 2 == 0 ? r::kWindowFieldSize : in.u8();
  for (std::size_t i = 0; i < length && !in.empty(); ++i)
    value.push_back(static_cast<char>(in.u8()));
  const std::string tag =
      value.substr(0, std::min<std::size_t>(value.size(), dsekp::edge::kSessionTagChars));
  ReplayWindow read(w);
  if (r::decode_window_field(value, tag, read) != r::WindowFieldMatch::same_session) return;
  ReplayWindow again(w);
  fuzz::check(r::decode_window_field(r::encode_window_field(tag, read), tag, again) ==
                      r::WindowFieldMatch::same_session &&
                  again.top() == read.top() && again.bitmap() == read.bitmap(),
              "a decoded window field does not survive a write and read",
              std::to_string(read.top()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::ByteReader in(ByteView(data, size));
  const std::uint32_t requested = in.u16() % 1100;  // 0 and > kMaxSize are clamped
  const std::uint32_t w =
      requested == 0 ? 1
                     : (requested > ReplayWindow::kMaxSize ? ReplayWindow::kMaxSize : requested);
  ReplayWindow window(requested);
  fuzz::check(window.size() == w, "size() is not the clamped size", std::to_string(requested));
  Model model(w);
  std::optional<ReplayWindow> restored;  // a copy rebuilt from top()/bitmap(), once asked for

  for (int steps = 0; !in.empty() && steps < 4096; ++steps) {
    const std::uint8_t op = in.u8();
    if (op % 8 == 7) {  // persist and restore
      restored.emplace(w);
      if ((op & 0x40) == 0) {
        restored->restore(window.top(), window.bitmap());
      } else {
        // Through the Redis store's window field (edge/store/redis/redis_window_field.hpp).
        const std::string tag(dsekp::edge::kSessionTagChars, 'a');
        const std::string field = dsekp::edge::redis::encode_window_field(tag, window);
        fuzz::check(dsekp::edge::redis::decode_window_field(field, tag, *restored) ==
                        dsekp::edge::redis::WindowFieldMatch::same_session,
                    "a window field does not read back", std::to_string(window.top()));
        fuzz::check(restored->top() == window.top() && restored->bitmap() == window.bitmap(),
                    "a window read back from its field differs", std::to_string(window.top()));
      }
      if ((op & 0x20) != 0) decode_any_field(in, w);
      continue;
    }
    const std::uint32_t seq = next_seq(in, model.top(), op % 8 % 6);
    const bool check_only = (op & 0x80) != 0;
    const Error want = check_only ? model.check(seq) : model.accept(seq);
    const Error got = check_only ? window.check(seq) : window.accept(seq);
    if (got != want) {
      fuzz::fail("ReplayWindow differs from the model",
                 describe(check_only ? "check" : "accept", seq, got, want, window.top(), w));
    }
    if (restored) {
      const Error again = check_only ? restored->check(seq) : restored->accept(seq);
      if (again != want) {
        fuzz::fail("restored ReplayWindow differs from the model",
                   describe(check_only ? "check" : "accept", seq, again, want, restored->top(), w));
      }
    }
    fuzz::check(window.top() == model.top(), "top() differs from the model",
                std::to_string(window.top()) + " vs " + std::to_string(model.top()));
  }
  return 0;
}
