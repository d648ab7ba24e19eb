#include "t5s/utc_time.h"

#include <chrono>
#include <cstdio>
#include <ctime>

namespace t5s {

std::string utc_iso8601(int64_t unix_ms, bool milliseconds) {
    int64_t secs = unix_ms / 1000, ms = unix_ms % 1000;
    if (ms < 0) {  // C++ division truncates toward zero: -1 ms is second -1, millisecond 999
        ms += 1000;
        secs -= 1;
    }
    const auto t = static_cast<std::time_t>(secs);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[64];
    const int date_time = std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d", tm.tm_year + 1900, tm.tm_mon + 1,
                                        tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    if (milliseconds) std::snprintf(buf + date_time, sizeof buf - static_cast<size_t>(date_time), ".%03dZ", static_cast<int>(ms));
    else std::snprintf(buf + date_time, sizeof buf - static_cast<size_t>(date_time), "Z");
    return buf;
}

int64_t unix_ms_now() {
    using namespace std::chrono;
    return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

}  // namespace t5s
