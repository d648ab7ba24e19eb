#include "t5s/process_memory.h"

#include <malloc.h>
#include <sys/mman.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>

namespace t5s {
namespace {

// The number of a "Key:   123 kB" line of /proc, in kB.
int64_t kb_value(const std::string& line) { return std::stoll(line.substr(line.find(':') + 1)); }

// The "Key:" line of /proc/self/status or /proc/meminfo, in bytes; 0 when absent.
int64_t proc_kb_field(const char* file, const std::string& key) {
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind(key, 0) == 0) return kb_value(line) * 1024;
    }
    return 0;
}

// One mapping of /proc/self/smaps, as far as release_clean_file_pages needs it.
struct Mapping {
    uintptr_t begin = 0, end = 0;
    std::string perms, path;
    bool file_backed = false;
    int64_t rss_kb = 0, anonymous_kb = 0;
    std::string flags;  // VmFlags: "io"/"pf" device memory, "lo" locked, "dd" not dumped, "ht" hugetlb

    bool clean_private_file_pages() const {
        if (!file_backed || path.rfind("/dev/", 0) == 0 || perms.size() < 4) return false;
        if (perms[1] == 'w' || perms[3] != 'p' || rss_kb == 0 || anonymous_kb != 0) return false;
        for (const char* f : {" io ", " pf ", " lo ", " dd ", " ht "}) {
            if (flags.find(f) != std::string::npos) return false;
        }
        return true;
    }
};

Mapping parse_mapping_header(const std::string& line) {
    std::istringstream ss(line);
    std::string range, offset, device, inode;
    Mapping m;
    ss >> range >> m.perms >> offset >> device >> inode;
    std::getline(ss >> std::ws, m.path);
    const size_t dash = range.find('-');
    m.begin = std::stoull(range.substr(0, dash), nullptr, 16);
    m.end = std::stoull(range.substr(dash + 1), nullptr, 16);
    m.file_backed = inode != "0" && !m.path.empty() && m.path[0] == '/';
    return m;
}

}  // namespace

int64_t release_clean_file_pages() {
    std::ifstream in("/proc/self/smaps");
    std::string line;
    Mapping m;
    int64_t released = 0;
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        if (!std::isupper(static_cast<unsigned char>(line[0]))) {  // "addr-addr perms ..." starts a mapping
            m = parse_mapping_header(line);
        } else if (line.rfind("Rss:", 0) == 0) {
            m.rss_kb = kb_value(line);
        } else if (line.rfind("Anonymous:", 0) == 0) {
            m.anonymous_kb = kb_value(line);
        } else if (line.rfind("VmFlags:", 0) == 0) {  // a mapping's last line
            m.flags = " " + line.substr(8) + " ";
            if (m.clean_private_file_pages() && madvise(reinterpret_cast<void*>(m.begin), m.end - m.begin, MADV_DONTNEED) == 0) {
                released += m.rss_kb * 1024;
            }
        }
    }
    return released;
}

namespace {

std::mutex g_load_heap_mutex;
int g_load_heap_scopes = 0;  // loads in progress (serve and the app may load several at once)

void set_heap_thresholds(int mmap_bytes, int trim_bytes) {
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, mmap_bytes);
    mallopt(M_TRIM_THRESHOLD, trim_bytes);
#else
    (void)mmap_bytes;
    (void)trim_bytes;
#endif
}

}  // namespace

LoadHeapScope::LoadHeapScope() {
    std::lock_guard<std::mutex> lock(g_load_heap_mutex);
    if (g_load_heap_scopes++ == 0) set_heap_thresholds(128 << 10, 128 << 10);  // glibc's starting values
}

LoadHeapScope::~LoadHeapScope() {
    std::lock_guard<std::mutex> lock(g_load_heap_mutex);
    if (--g_load_heap_scopes == 0) set_heap_thresholds(32 << 20, kKeptFreeHeapBytes);
}

int64_t release_free_heap() {
    const int64_t before = process_rss_bytes();
#ifdef __GLIBC__
    malloc_trim(0);
#endif
    return std::max<int64_t>(0, before - process_rss_bytes());
}

int64_t process_rss_bytes() { return proc_kb_field("/proc/self/status", "VmRSS:"); }
int64_t process_peak_rss_bytes() { return proc_kb_field("/proc/self/status", "VmHWM:"); }
int64_t host_available_bytes() { return proc_kb_field("/proc/meminfo", "MemAvailable:"); }

}  // namespace t5s
