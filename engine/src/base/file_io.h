#pragma once
// Small file helpers shared by the engine, the history and the trainer (torch-free).
#include <filesystem>
#include <string>

namespace t5s {

// The whole file as bytes; throws t5s::Error(FileNotFound) naming the file when it cannot be opened.
std::string read_text(const std::filesystem::path& path);

// fsync a directory so that a rename or link inside it survives a crash. Best effort: some file
// systems refuse fsync on directories, and nothing can be done about it then.
void fsync_dir(const std::filesystem::path& dir);

}  // namespace t5s
