// A function run every `period` on a thread of its own until the task is destroyed (the
// daemon's availability sweep). The destructor wakes the thread and joins it, so the function
// never runs after the task is gone; it must not throw.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

namespace dsekp::edge::daemon {

class PeriodicTask {
 public:
  PeriodicTask(std::chrono::milliseconds period, std::function<void()> run)
      : period_(period), run_(std::move(run)), thread_([this] { loop(); }) {}
  ~PeriodicTask() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  PeriodicTask(const PeriodicTask&) = delete;
  PeriodicTask& operator=(const PeriodicTask&) = delete;

 private:
  void loop() {
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, period_, [this] { return stopping_; })) {
      lock.unlock();
      run_();
      lock.lock();
    }
  }

  std::chrono::milliseconds period_;
  std::function<void()> run_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;  // last: started once everything it uses exists
};

}  // namespace dsekp::edge::daemon
