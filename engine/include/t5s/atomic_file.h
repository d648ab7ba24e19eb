#pragma once
// Atomic file writes: a temp file in the target's directory, fsync, then rename over (or, without
// overwrite, link into place only if the target still does not exist), then fsync the directory.
// A reader never sees a half-written file; any failure throws t5s::Error naming the target, the
// temp file is removed and an existing target is never touched.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace t5s {

class AtomicFile {
public:
    // `what` names the file in messages ("export file", "file").
    AtomicFile(const std::string& path, bool overwrite, std::string what = "file");
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
    std::string what_;
    std::string temp_;
    bool overwrite_ = false;
    int fd_ = -1;
    bool committed_ = false;
    std::string buffer_;
    int64_t bytes_ = 0;
};

// The whole content at once, replacing any existing file.
void write_file_atomic(const std::filesystem::path& path, const void* data, size_t size);
inline void write_file_atomic(const std::filesystem::path& path, const std::string& text) {
    write_file_atomic(path, text.data(), text.size());
}

}  // namespace t5s
