// CompositeSink (see composite_sink.hpp).
#include "edge/sinks/composite_sink.hpp"

namespace dsekp::edge::sinks {

bool CompositeSink::write(const AcceptedFrame& row) {
  for (SinkWriter* sink : sinks_)
    if (!sink->write(row)) return false;  // an exception propagates to the service the same way
  return true;
}

bool CompositeSink::before_commit() noexcept {
  refused_ = nullptr;
  for (SinkWriter* sink : sinks_) {
    if (!sink->before_commit()) {
      refused_ = sink;
      return false;
    }
  }
  return true;
}

void CompositeSink::committed() noexcept {
  for (SinkWriter* sink : sinks_) sink->committed();
}

void CompositeSink::rolled_back() noexcept {
  for (SinkWriter* sink : sinks_) sink->rolled_back();
}

void CompositeSink::savepoint() noexcept {
  for (SinkWriter* sink : sinks_) sink->savepoint();
}

void CompositeSink::rolled_back_to_savepoint() noexcept {
  for (SinkWriter* sink : sinks_) sink->rolled_back_to_savepoint();
}

}  // namespace dsekp::edge::sinks
