#include "hub/hub_paths.h"

#include <cctype>

#include "t5s/hub_pull.h"

namespace t5s::hub {

namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxPathBytes = 1024, kMaxComponentBytes = 255, kMaxComponents = 32;

bool control(unsigned char c) { return c < 0x20 || c == 0x7f; }

}  // namespace

std::string unsafe_path_reason(std::string_view name) {
    if (name.empty()) return "an empty path";
    if (name.size() > kMaxPathBytes) return "longer than " + std::to_string(kMaxPathBytes) + " bytes";
    if (name.front() == '/') return "an absolute path";
    size_t components = 0;
    for (size_t start = 0; start <= name.size();) {
        size_t end = name.find('/', start);
        if (end == std::string_view::npos) end = name.size();
        const std::string_view part = name.substr(start, end - start);
        if (part.empty()) return "an empty path component";
        if (part == "." || part == "..") return "a '" + std::string(part) + "' component";
        if (part.size() > kMaxComponentBytes) return "a component longer than " + std::to_string(kMaxComponentBytes) + " bytes";
        if (++components > kMaxComponents) return "more than " + std::to_string(kMaxComponents) + " levels deep";
        start = end + 1;
    }
    for (unsigned char c : name) {
        if (c == '\\') return "a backslash";
        if (control(c)) return c == 0 ? "a NUL byte" : "a control byte";
    }
    return "";
}

void check_relative_path(const std::string& name, const std::string& what) {
    const std::string why = unsafe_path_reason(name);
    if (!why.empty())
        throw PullError(PullFailure::Server,
                        what + ": the server names the path '" + shown(name) + "' (" + why + "); refused, nothing was written");
}

fs::path path_inside(const fs::path& root, const std::string& name, const std::string& what) {
    check_relative_path(name, what);
    // The name is relative and has no "..": it stays below root unless a folder on the way is a
    // symlink, which a pull never makes (an earlier snapshot could hold one, put there by hand).
    fs::path path = root;
    std::error_code ec;
    for (size_t start = 0, end; (end = name.find('/', start)) != std::string::npos; start = end + 1) {
        path /= name.substr(start, end - start);
        if (fs::is_symlink(fs::symlink_status(path, ec)))
            throw PullError(PullFailure::Server,
                            what + ": " + shown(path.string(), 400) + " is a symlink; refused, nothing is written through it");
    }
    return root / name;
}

bool is_commit_hash(std::string_view s) {
    if (s.size() != 40) return false;
    for (unsigned char c : s)
        if (!std::isxdigit(c)) return false;
    return true;
}

bool is_blob_name(std::string_view s) {
    if (s.empty() || s.size() > 128 || s.front() == '.') return false;
    for (unsigned char c : s)
        if (!std::isalnum(c) && c != '_' && c != '.' && c != '-') return false;
    return true;
}

std::string shown(std::string_view text, size_t max_bytes) {
    static const char* kHex = "0123456789abcdef";
    std::string out;
    for (size_t i = 0; i < text.size() && i < max_bytes; ++i) {
        const unsigned char c = static_cast<unsigned char>(text[i]);
        if (control(c) || c == '\\' || c >= 0x80) {
            out += "\\x";
            out += kHex[c >> 4];
            out += kHex[c & 15];
        } else {
            out += static_cast<char>(c);
        }
    }
    if (text.size() > max_bytes) out += "...";
    return out;
}

}  // namespace t5s::hub
