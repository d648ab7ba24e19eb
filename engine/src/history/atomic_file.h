#pragma once
// Writes a file atomically: a temp file in the target's directory, fsync, then rename over (or,
// without overwrite, link into place only if the target still does not exist), then fsync the
// directory. Any failure throws t5s::Error naming the target; the temp file is removed and an
// existing target is never touched.
#include <cstdint>
#include <string>
#include <string_view>

namespace t5s::history {

class AtomicFile {
public:
    AtomicFile(const std::string& path, bool overwrite);
    ~AtomicFile();  // removes the temp file unless commit() succeeded
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;

    void write(std::string_view data);  // buffered
    void commit();
    int64_t bytes_written() const { return bytes_; }
    const std::string& temp_path() const { return temp_; }

private:
    void flush_buffer();
    [[noreturn]] void fail(const std::string& what, int err);

    std::string path_;
    std::string temp_;
    bool overwrite_ = false;
    int fd_ = -1;
    bool committed_ = false;
    std::string buffer_;
    int64_t bytes_ = 0;
};

}  // namespace t5s::history
