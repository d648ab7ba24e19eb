#pragma once
// Names a Hub server chooses (file names, module folders, revisions, commits, ETags) become paths
// in the cache and words on the terminal. The server may be hostile: each name is checked before it
// names anything on disk, and escaped before it is printed. Internal to engine/src/hub.
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include "t5s/hub_pull.h"  // shown(): names are escaped before they are printed

namespace t5s::hub {

// Why `name` cannot be a path below a folder of the cache ("" when it can): it must be relative,
// with no empty, "." or ".." component, no backslash, no NUL or other control byte, at most 1024
// bytes and 255 bytes a component, at most 32 components.
std::string unsafe_path_reason(std::string_view name);

// Throws PullError(Server), one line naming `what` (the repository file) and the reason, when
// unsafe_path_reason(name) is not "".
void check_relative_path(const std::string& name, const std::string& what);

// `root / name` once `name` passed the check above and no folder between `root` and the file is a
// symlink (which could lead outside); throws PullError(Server), one line naming `what`, otherwise.
std::filesystem::path path_inside(const std::filesystem::path& root, const std::string& name, const std::string& what);

// 40 lower- or upper-case hex digits (a git commit).
bool is_commit_hash(std::string_view s);

// A blob's file name (an ETag or SHA-256): 1..128 of [A-Za-z0-9_.-], not starting with '.'.
bool is_blob_name(std::string_view s);

}  // namespace t5s::hub
