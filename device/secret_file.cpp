// FileSecretStore (see secret_file.hpp).
#include "device/secret_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

namespace dsekp::device {
namespace {

constexpr std::size_t kRecordSize = 8 + 4 + kDevSecretSize;

bool write_all(int fd, const std::uint8_t* data, std::size_t size) noexcept {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool sync_directory(const std::filesystem::path& dir) noexcept {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::fsync(fd) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

FileSecretStore::FileSecretStore(std::filesystem::path dir, const DevId& dev_id,
                                 std::uint64_t generation)
    : dir_(std::move(dir)),
      path_(dir_ / (std::string(dev_id.str()) + ".secret")),
      generation_(generation) {}

bool FileSecretStore::load(DeviceCredentials& credentials) const {
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return false;
    throw SecretFileError(path_.string() + ": " + std::strerror(errno));
  }
  std::array<std::uint8_t, kRecordSize + 1> record{};
  std::size_t got = 0;
  for (;;) {
    const ssize_t n = ::read(fd, record.data() + got, record.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
    if (got == record.size()) break;
  }
  ::close(fd);
  if (got != kRecordSize) {
    secure_wipe(MutableByteView(record));
    throw SecretFileError(path_.string() + ": expected " + std::to_string(kRecordSize) +
                          " bytes (u64 generation, u32 epoch, a 32-byte secret), found " +
                          (got > kRecordSize ? "more" : std::to_string(got)));
  }
  const bool same_material = load_be64(record.data()) == generation_;
  if (same_material) {
    credentials.epoch = load_be32(record.data() + 8);
    (void)credentials.dev_secret.assign(ByteView(record.data() + 12, kDevSecretSize));
  }
  secure_wipe(MutableByteView(record));
  return same_material;
}

bool FileSecretStore::store_secret(const DevSecret& secret, std::uint32_t epoch) noexcept {
  std::array<std::uint8_t, kRecordSize> record{};
  store_be64(record.data(), generation_);
  store_be32(record.data() + 8, epoch);
  std::memcpy(record.data() + 12, secret.view().data(), kDevSecretSize);
  std::filesystem::path temporary = path_;
  temporary += ".new";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  bool ok = fd >= 0 && write_all(fd, record.data(), record.size()) && ::fsync(fd) == 0;
  secure_wipe(MutableByteView(record));
  if (fd >= 0) ::close(fd);
  // The old file stays open across the rename, to be overwritten once nothing needs it: after the
  // directory is synced (zeroed before that, a power cut could bring back a zeroed file), so a
  // failed directory sync leaves it as it was and reports the write failed.
  const int old_fd = ok ? ::open(path_.c_str(), O_WRONLY | O_CLOEXEC) : -1;
  ok = ok && ::rename(temporary.c_str(), path_.c_str()) == 0 && sync_directory(dir_);
  if (!ok) {
    ::unlink(temporary.c_str());
    if (old_fd >= 0) ::close(old_fd);
    return false;
  }
  if (old_fd >= 0) {
    const std::array<std::uint8_t, kRecordSize> zeros{};
    (void)(write_all(old_fd, zeros.data(), zeros.size()) && ::fdatasync(old_fd) == 0);
    ::close(old_fd);
  }
  ++writes_;
  return true;
}

}  // namespace dsekp::device
