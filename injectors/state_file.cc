#include "injectors/state_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

namespace collide::injectors {
namespace {

namespace fs = std::filesystem;

Status check_owner_and_mode(const fs::path& path, const struct stat& st) {
  if (st.st_uid != geteuid()) {
    return permission_denied(fmt::format(
        "{}: owned by uid {}, not by uid {} (the user running collide): refusing to act on it (collide's "
        "undo state is written by the user who injects; remove it if it is not yours)",
        path.string(), st.st_uid, geteuid()));
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return permission_denied(fmt::format(
        "{}: writable by group or others (mode {:o}): refusing to act on it (collide writes its "
        "undo state for its owner only; remove it if it is not collide's)",
        path.string(), st.st_mode & 07777));
  }
  return {};
}

}  // namespace

Status check_state_folder(const fs::path& folder) {
  struct stat st {};
  if (lstat(folder.c_str(), &st) != 0) return errno_status(errno, folder.string());
  if (!S_ISDIR(st.st_mode)) {
    return permission_denied(fmt::format("{}: not a folder (a link or a file): refusing to act "
                                         "on it",
                                         folder.string()));
  }
  return check_owner_and_mode(folder, st);
}

Result<std::string> read_state_file(const fs::path& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return errno_status(errno, path.string());
  struct stat st {};
  Status checked = fstat(fd, &st) != 0 ? errno_status(errno, path.string())
                   : !S_ISREG(st.st_mode)
                       ? permission_denied(fmt::format("{}: not a regular file", path.string()))
                       : check_owner_and_mode(path, st);
  std::string text;
  char chunk[4096];
  ssize_t n = 0;
  while (checked.ok() && (n = read(fd, chunk, sizeof(chunk))) != 0) {
    if (n < 0) {
      if (errno == EINTR) continue;
      checked = errno_status(errno, path.string());
    } else {
      text.append(chunk, static_cast<size_t>(n));
    }
  }
  close(fd);
  if (!checked.ok()) return checked;
  return text;
}

Status write_state_file(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.string() + ".tmp";
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return errno_status(errno, fmt::format("writing {}", tmp.string()));
  const std::string line = text + "\n";
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = write(fd, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      close(fd);
      return errno_status(err, fmt::format("writing {}", tmp.string()));
    }
    done += static_cast<size_t>(n);
  }
  close(fd);
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    return errno_status(errno, fmt::format("renaming {}", tmp.string()));
  }
  return {};
}

Status make_state_folder(const fs::path& folder, fs::perms mode) {
  std::error_code ec;
  if (fs::create_directories(folder, ec)) {
    fs::permissions(folder, mode, ec);
  }
  if (ec) {
    return errno_status(ec.value(), fmt::format("creating the fault state folder {}",
                                                folder.string()));
  }
  return check_state_folder(folder);
}

}  // namespace collide::injectors
