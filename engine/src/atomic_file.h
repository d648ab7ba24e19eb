#pragma once
// Write-then-rename helpers: a reader never sees a half-written file, and a failed write leaves
// the previous file untouched.
#include <filesystem>
#include <string>

namespace t5s {

// Writes `size` bytes to `path` via `path.tmp.<pid>` + fsync + rename. Throws t5s::Error naming the file.
void write_file_atomic(const std::filesystem::path& path, const void* data, size_t size);
inline void write_file_atomic(const std::filesystem::path& path, const std::string& text) {
    write_file_atomic(path, text.data(), text.size());
}

}  // namespace t5s
