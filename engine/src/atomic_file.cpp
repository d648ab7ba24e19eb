#include "atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "t5s/error.h"

namespace t5s {

void write_file_atomic(const std::filesystem::path& path, const void* data, size_t size) {
    const std::filesystem::path tmp = path.string() + ".tmp." + std::to_string(::getpid());
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw Error(ErrorCode::FileNotFound, path.string() + ": cannot write (" + std::strerror(errno) + ")");
    const char* p = static_cast<const char*>(data);
    size_t left = size;
    while (left > 0) {
        ssize_t w = ::write(fd, p, left);
        if (w < 0) {
            if (errno == EINTR) continue;
            const int err = errno;
            ::close(fd);
            ::unlink(tmp.c_str());
            throw Error(ErrorCode::Internal, path.string() + ": write failed (" + std::strerror(err) + ")");
        }
        p += w;
        left -= static_cast<size_t>(w);
    }
    if (::fsync(fd) != 0 || ::close(fd) != 0) {
        const int err = errno;
        ::unlink(tmp.c_str());
        throw Error(ErrorCode::Internal, path.string() + ": flush failed (" + std::strerror(err) + ")");
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        const int err = errno;
        ::unlink(tmp.c_str());
        throw Error(ErrorCode::Internal, path.string() + ": rename failed (" + std::strerror(err) + ")");
    }
}

}  // namespace t5s
