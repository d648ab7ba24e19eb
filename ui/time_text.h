#pragma once
// Times as the app shows them: in the user's local time zone. (What is recorded, in files and JSON,
// is UTC through the engine's one formatter, t5s/utc_time.h; this is display only.)
#include <cstdint>
#include <string>

namespace t5s::ui {

// `unix_ms` (milliseconds since 1970-01-01 UTC) as local time through strftime's `format`
// ("%Y-%m-%d %H:%M"); safe from any thread (localtime_r). "" when the text would pass 63 bytes.
std::string local_time_text(int64_t unix_ms, const char* format);

}  // namespace t5s::ui
