#include "t5s/process_memory.h"

#include <fstream>
#include <sstream>
#include <string>

namespace t5s {
namespace {

// "Key:   123 kB" lines of /proc/self/status and /proc/meminfo, in bytes.
int64_t proc_kb_field(const char* file, const std::string& key) {
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind(key, 0) == 0) {
            std::istringstream ss(line.substr(key.size()));
            int64_t kb = 0;
            ss >> kb;
            return kb * 1024;
        }
    }
    return 0;
}

}  // namespace

int64_t process_rss_bytes() {
    return proc_kb_field("/proc/self/status", "VmRSS:");
}
int64_t process_peak_rss_bytes() {
    return proc_kb_field("/proc/self/status", "VmHWM:");
}
int64_t host_available_bytes() {
    return proc_kb_field("/proc/meminfo", "MemAvailable:");
}

}  // namespace t5s
