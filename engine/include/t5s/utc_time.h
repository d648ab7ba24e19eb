#pragma once
// The one formatter of recorded times: every file and JSON field that stores when something happened
// (history exports, `history --json`, learning manifests) writes UTC as ISO 8601 through it, so that
// they sort and parse alike. (The app shows local times; that is display, not a record.)
#include <cstdint>
#include <string>

namespace t5s {

// "2024-05-01T12:00:00.250Z", or with milliseconds = false "2024-05-01T12:00:00Z". Times before
// 1970 round down to the millisecond below (-1 ms is 1969-12-31T23:59:59.999Z).
std::string utc_iso8601(int64_t unix_ms, bool milliseconds = true);

// Now, in milliseconds since 1970-01-01 UTC (the history's created_at clock).
int64_t unix_ms_now();

}  // namespace t5s
