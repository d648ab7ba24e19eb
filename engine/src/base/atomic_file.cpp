#include "t5s/atomic_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

#include <utility>

#include "base/file_io.h"
#include "t5s/error.h"

namespace t5s {

namespace {

constexpr size_t kBufferSize = 1 << 20;
constexpr time_t kAbandonedAfterSeconds = 60;

std::string dir_of(const std::string& path) {
    auto slash = path.find_last_of('/');
    if (slash == std::string::npos) return ".";
    if (slash == 0) return "/";
    return path.substr(0, slash);
}

std::string base_of(const std::string& path) {
    auto slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string errno_text(int err) {
    if (err == ENOSPC || err == EDQUOT) return "disk full (" + std::string(std::strerror(err)) + ")";
    if (err == EFBIG) return "file too large for this disk or quota (" + std::string(std::strerror(err)) + ")";
    return std::strerror(err);
}

// Temp files of earlier writers of the same target that were killed before they could remove them
// (kill -9, power loss). A live writer holds an exclusive flock on its temp file, so a temp file
// whose lock can be taken has no owner any more and is removed; a concurrent writer's is left alone.
// Only files untouched for a while: a writer that has just created its file may not hold the lock yet.
void remove_abandoned_temp_files(const std::string& dir, const std::string& base) {
    const std::string prefix = "." + base + ".tmp-";
    DIR* d = ::opendir(dir.c_str());
    if (!d) return;
    while (const dirent* e = ::readdir(d)) {
        const std::string name = e->d_name;
        if (name.size() != prefix.size() + 6 || name.compare(0, prefix.size(), prefix) != 0) continue;
        const std::string path = dir + "/" + name;
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0) continue;
        struct stat st {};
        const bool settled = ::fstat(fd, &st) == 0 && st.st_mtime + kAbandonedAfterSeconds < ::time(nullptr);
        if (settled && ::flock(fd, LOCK_EX | LOCK_NB) == 0) ::unlink(path.c_str());
        ::close(fd);
    }
    ::closedir(d);
}

// The process's umask. umask() can only be read by setting it, which races with other threads
// creating files; Linux shows it in /proc/self/status instead. Without /proc: the value read once
// while static objects are initialised (before main starts threads).
mode_t umask_at_start() {
    const mode_t mask = ::umask(022);
    ::umask(mask);
    return mask;
}
const mode_t kUmaskAtStart = umask_at_start();

mode_t current_umask() {
    FILE* f = std::fopen("/proc/self/status", "re");
    if (!f) return kUmaskAtStart;
    unsigned mask = 0;
    bool found = false;
    char line[256];
    while (!found && std::fgets(line, sizeof line, f)) found = std::sscanf(line, "Umask: %o", &mask) == 1;
    std::fclose(f);
    return found ? static_cast<mode_t>(mask & 0777) : kUmaskAtStart;
}

// The mode of the finished file: the replaced file's permissions, or what open(O_CREAT, 0666)
// would give a new one (mkostemp makes its temp file 0600 whatever the umask).
mode_t final_mode(const struct stat* existing) {
    if (existing && S_ISREG(existing->st_mode)) return existing->st_mode & 0777;
    return 0666 & ~current_umask();
}

}  // namespace

AtomicFile::AtomicFile(const std::string& path, bool overwrite, std::string what)
    : path_(path), what_(std::move(what)), overwrite_(overwrite) {
    if (path.empty() || path.back() == '/') throw Error(ErrorCode::InvalidArgument, what_ + " '" + path + "': not a file name");
    const std::string dir = dir_of(path);
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        throw Error(ErrorCode::FileNotFound, what_ + " " + path + ": directory " + dir + " does not exist");
    const bool exists = ::lstat(path.c_str(), &st) == 0;
    if (exists) {
        if (S_ISDIR(st.st_mode)) throw Error(ErrorCode::InvalidArgument, what_ + " " + path + " is a directory");
        if (!overwrite_)
            throw Error(ErrorCode::InvalidArgument,
                        what_ + " " + path + " already exists (use --force / overwrite to replace it)");
    }
    const mode_t mode = final_mode(exists ? &st : nullptr);
    remove_abandoned_temp_files(dir, base_of(path));
    std::string tmpl = dir + "/." + base_of(path) + ".tmp-XXXXXX";
    fd_ = ::mkostemp(tmpl.data(), O_CLOEXEC);
    if (fd_ < 0) {
        const int err = errno;
        throw Error(ErrorCode::InvalidArgument, what_ + " " + path + ": cannot create a file in " + dir + ": " + errno_text(err));
    }
    temp_ = tmpl;
    ::flock(fd_, LOCK_EX | LOCK_NB);  // "in use" for remove_abandoned_temp_files; released when fd_ closes
    ::fchmod(fd_, mode);
    buffer_.reserve(kBufferSize);
}

AtomicFile::~AtomicFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_ && !temp_.empty()) ::unlink(temp_.c_str());
}

void AtomicFile::fail(const std::string& what, int err) {
    // Release the temp file now so that the error leaves nothing behind even if the caller keeps us.
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    if (!temp_.empty()) ::unlink(temp_.c_str());
    temp_.clear();
    throw Error(ErrorCode::Internal, what_ + " " + path_ + ": " + what + ": " + errno_text(err) +
                                         (overwrite_ ? "; the existing file was not changed" : ""));
}

void AtomicFile::write(std::string_view data) {
    if (buffer_.size() + data.size() > kBufferSize) flush_buffer();
    if (data.size() >= kBufferSize) {
        buffer_.assign(data.data(), data.size());
        flush_buffer();
        return;
    }
    buffer_.append(data.data(), data.size());
}

void AtomicFile::flush_buffer() {
    if (fd_ < 0) fail("write after failure", EBADF);
    const char* p = buffer_.data();
    size_t left = buffer_.size();
    while (left > 0) {
        ssize_t n = ::write(fd_, p, left);
        if (n < 0) {
            if (errno == EINTR) continue;
            fail("write failed", errno);
        }
        if (n == 0) fail("write failed", ENOSPC);
        p += n;
        left -= static_cast<size_t>(n);
        bytes_ += n;
    }
    buffer_.clear();
}

void AtomicFile::commit() {
    flush_buffer();
    if (::fsync(fd_) != 0) fail("fsync failed", errno);
    if (::close(fd_) != 0) {
        fd_ = -1;
        fail("close failed", errno);
    }
    fd_ = -1;
    if (overwrite_) {
        if (::rename(temp_.c_str(), path_.c_str()) != 0) fail("cannot move the finished file into place", errno);
    } else {
        // link() fails with EEXIST if the target appeared meanwhile: never replace it.
        if (::link(temp_.c_str(), path_.c_str()) != 0) {
            const int err = errno;
            if (err == EEXIST) {
                ::unlink(temp_.c_str());
                temp_.clear();
                throw Error(ErrorCode::InvalidArgument, what_ + " " + path_ + " already exists (created while exporting)");
            }
            if (err != EPERM && err != EOPNOTSUPP && err != EXDEV && err != EMLINK)
                fail("cannot move the finished file into place", err);
            // File systems without hard links: check, then rename (a tiny race, but no silent overwrite in practice).
            struct stat st {};
            if (::lstat(path_.c_str(), &st) == 0) {
                ::unlink(temp_.c_str());
                temp_.clear();
                throw Error(ErrorCode::InvalidArgument, what_ + " " + path_ + " already exists (created while exporting)");
            }
            if (::rename(temp_.c_str(), path_.c_str()) != 0) fail("cannot move the finished file into place", errno);
        } else {
            ::unlink(temp_.c_str());
        }
    }
    committed_ = true;
    fsync_dir(dir_of(path_));
}

void write_file_atomic(const std::filesystem::path& path, const void* data, size_t size) {
    AtomicFile file(path.string(), /*overwrite=*/true);
    file.write(std::string_view(static_cast<const char*>(data), size));
    file.commit();
}

}  // namespace t5s
