#include "agent/cli/output_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace ptxbench::cli {

void write_file_atomically(const std::filesystem::path& path, const std::string& text) {
  const std::filesystem::path partial = path.string() + ".partial-" + std::to_string(::getpid());
  auto fail = [&](int error, bool remove) {
    if (remove) ::unlink(partial.c_str());
    throw std::runtime_error("cannot write " + path.string() + ": " + std::strerror(error));
  };
  const int fd = ::open(partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) fail(errno, false);
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n < 0 ? errno : ENOSPC;
      ::close(fd);
      fail(error, true);
    }
    done += static_cast<size_t>(n);
  }
  // A file system that reserves space late (NFS, delayed allocation) reports a full disk here.
  if (::fsync(fd) != 0) {
    const int error = errno;
    ::close(fd);
    fail(error, true);
  }
  if (::close(fd) != 0) fail(errno, true);
  if (::rename(partial.c_str(), path.c_str()) != 0) fail(errno, true);
}

}  // namespace ptxbench::cli
