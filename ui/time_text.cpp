#include "time_text.h"

#include <ctime>

namespace t5s::ui {

std::string local_time_text(int64_t unix_ms, const char* format) {
    const std::time_t t = static_cast<std::time_t>(unix_ms / 1000);
    std::tm tm{};
    localtime_r(&t, &tm);
    char buf[64];
    const size_t n = std::strftime(buf, sizeof buf, format, &tm);
    return std::string(buf, n);
}

}  // namespace t5s::ui
