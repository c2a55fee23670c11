// Files that hold secrets: created with mode 0600 from the first byte, and refused when they are
// open to group or others.
//
// The registry database holds every DEV_SECRET, and the broker password file holds hashes that
// an offline attacker could test guesses against. Creating them with open(O_CREAT|O_EXCL, 0600)
// (not fopen, then chmod) leaves no window in which another user can open them.
#pragma once

#include <sys/types.h>
#include <string>
#include <string_view>

#include "registry_status.hpp"

namespace dsekp::edge {

/// Creates `path` empty with `mode` if it does not exist (created = true), or leaves an existing
/// file alone (created = false). Never follows a symlink at `path`.
RegistryStatus create_file_if_missing(const std::string& path, mode_t mode, bool& created);

/// Fails with insecure_file unless `path` is a regular file without any group/other permission
/// bits (what `chmod 600` gives), with a message saying how to fix it.
RegistryStatus check_private_file(const std::string& path);

/// The password on the first line of `path` (`--password-file` and the like), without its line
/// end: read as read_trusted_file does with no_other_read (so a password file others may read
/// or write is refused with the chmod that fixes it), at most 4 KiB; invalid_argument if the
/// file is missing or its first line empty.
RegistryStatus read_password_file(const std::string& path, std::string& out);

/// Reads `path`, a file whose contents go into one the broker trusts: opened without following a
/// symlink, and refused (insecure_file) unless regular, without other hard links (another
/// file's contents under this name), owned by root or this user, writable by no one else and,
/// when `no_other_read`, readable by no one outside its group; invalid_argument above
/// `max_bytes`. A missing file reads as "".
RegistryStatus read_trusted_file(const std::string& path, std::size_t max_bytes, bool no_other_read,
                                 std::string& out);

/// Writes `contents` to `path` atomically: a temporary file with `mode` (and `group`, unless it
/// is kKeepGroup) in the same directory, fsync, then rename over `path`. A reader (or a broker
/// reloading on SIGHUP) sees the old file or the new one, never half of one, and never a file
/// with other permissions than these.
inline constexpr gid_t kKeepGroup = static_cast<gid_t>(-1);
RegistryStatus write_file_atomically(const std::string& path, std::string_view contents,
                                     mode_t mode, gid_t group = kKeepGroup);

}  // namespace dsekp::edge
