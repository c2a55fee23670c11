// Fans each call out to the enabled sinks, in order. A write() refused (or thrown) by any sink
// fails the whole unit, which the service then rolls back: every sink hears rolled_back(), so
// the ones that already staged the row forget it.
#pragma once

#include <vector>

#include "edge/service/sink_writer.hpp"

namespace dsekp::edge::sinks {

class CompositeSink final : public SinkWriter {
 public:
  /// `sink` must outlive this object.
  void add(SinkWriter& sink) { sinks_.push_back(&sink); }

  [[nodiscard]] bool write(const AcceptedFrame& row) override;
  [[nodiscard]] bool before_commit() noexcept override;
  [[nodiscard]] std::string refusal() const override {
    return refused_ != nullptr ? refused_->refusal() : std::string();
  }
  void committed() noexcept override;
  void rolled_back() noexcept override;
  void savepoint() noexcept override;
  void rolled_back_to_savepoint() noexcept override;

 private:
  std::vector<SinkWriter*> sinks_;
  const SinkWriter* refused_ = nullptr;  // the sink whose before_commit() refused last
};

}  // namespace dsekp::edge::sinks
