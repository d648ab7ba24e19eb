#pragma once
// A tmpfs of a few hundred KB mounted for one test, to run writes into a full disk. Mounting needs
// root (CAP_SYS_ADMIN); where that is refused, mounted() is false and why() says so (tests SKIP).
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

namespace t5s::test {

class TinyTmpfs {
public:
    explicit TinyTmpfs(size_t bytes) {
        const char* base = std::getenv("TMPDIR");
        std::string tmpl = std::string(base && *base ? base : "/tmp") + "/t5s-tmpfs-XXXXXX";
        if (!::mkdtemp(tmpl.data())) {
            why_ = std::string("mkdtemp failed: ") + std::strerror(errno);
            return;
        }
        dir_ = tmpl;
        const std::string options = "size=" + std::to_string(bytes) + ",mode=0700";
        if (::mount("tmpfs", dir_.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) != 0) {
            why_ = "cannot mount a tmpfs (" + std::string(std::strerror(errno)) +
                   "): the full-disk checks need root or CAP_SYS_ADMIN";
            return;
        }
        mounted_ = true;
    }
    ~TinyTmpfs() {
        if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
        if (!dir_.empty()) ::rmdir(dir_.c_str());
    }
    TinyTmpfs(const TinyTmpfs&) = delete;
    TinyTmpfs& operator=(const TinyTmpfs&) = delete;

    bool mounted() const { return mounted_; }
    const std::string& why() const { return why_; }
    std::string file(const std::string& name) const { return dir_ + "/" + name; }

private:
    std::string dir_;
    std::string why_;
    bool mounted_ = false;
};

}  // namespace t5s::test
