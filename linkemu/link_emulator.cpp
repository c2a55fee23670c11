// LinkEmulator: sockets set up on the caller's thread, then RelayLoop on its own thread.
#include "linkemu/link_emulator.hpp"

#include <pthread.h>
#include <signal.h>

#include <cerrno>
#include <mutex>
#include <thread>

#include "linkemu/link_counters.hpp"
#include "linkemu/relay_loop.hpp"
#include "linkemu/socket_util.hpp"

namespace dsekp::linkemu {

struct LinkEmulator::Impl {
  LinkSpec spec;
  std::uint64_t seed = 0;
  LinkCounters counters;
  mutable std::mutex mutex;  // start, stop, set_spec, cut and listen_address
  std::unique_ptr<RelayLoop> loop;
  std::thread thread;
  bool started = false;
  std::string listen_address;
};

LinkEmulator::LinkEmulator(const LinkSpec& spec, std::uint64_t seed)
    : impl_(std::make_unique<Impl>()) {
  impl_->spec = spec;
  impl_->seed = seed;
}

LinkEmulator::~LinkEmulator() {
  stop();
}

std::uint16_t LinkEmulator::start(const std::string& listen_host, std::uint16_t listen_port,
                                  const std::string& target_host, std::uint16_t target_port,
                                  std::string& error) {
  const std::lock_guard lock(impl_->mutex);
  if (impl_->started) {
    error = "the link emulator was started before";
    return 0;
  }
  SocketAddress listen_address;
  SocketAddress target_address;
  if (!resolve_tcp(listen_host, listen_port, listen_address, error)) {
    error = "listen: " + error;
    return 0;
  }
  if (!resolve_tcp(target_host, target_port, target_address, error)) {
    error = "target: " + error;
    return 0;
  }
  UniqueFd listener = listen_tcp(listen_address, error);
  if (!listener.valid()) {
    error = "listen on " + listen_host + ":" + std::to_string(listen_port) + ": " + error;
    return 0;
  }
  std::uint16_t port = 0;
  if (!local_endpoint(listener.get(), impl_->listen_address, port)) {
    error = "getsockname: " + errno_text(errno);
    return 0;
  }
  auto loop = std::make_unique<RelayLoop>(std::move(listener), target_address, impl_->spec,
                                          impl_->seed, impl_->counters);
  if (!loop->init(error)) return 0;
  impl_->loop = std::move(loop);
  impl_->thread = std::thread([loop = impl_->loop.get()] {
    // Signals are for the application's threads, never for the relay.
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    loop->run();
  });
  impl_->started = true;
  return port;
}

void LinkEmulator::stop() {
  const std::lock_guard lock(impl_->mutex);
  if (!impl_->thread.joinable()) return;
  impl_->loop->request_stop();
  impl_->thread.join();
  impl_->loop.reset();
}

LinkStats LinkEmulator::stats() const {
  return impl_->counters.snapshot();
}

std::string LinkEmulator::listen_address() const {
  const std::lock_guard lock(impl_->mutex);
  return impl_->listen_address;
}

void LinkEmulator::set_spec(const LinkSpec& spec) {
  const std::lock_guard lock(impl_->mutex);
  impl_->spec = spec;
  if (impl_->loop) impl_->loop->set_spec(spec);
}

void LinkEmulator::cut_connections(DropMode how) {
  const std::lock_guard lock(impl_->mutex);
  if (impl_->loop) impl_->loop->cut_connections(how);
}

}  // namespace dsekp::linkemu
