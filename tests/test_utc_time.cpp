// The one formatter of recorded times (t5s/utc_time.h): what history exports, `history --json` and
// learning manifests write.
#include <catch2/catch.hpp>

#include <ctime>

#include "t5s/utc_time.h"

using namespace t5s;

TEST_CASE("utc_iso8601 writes UTC with or without milliseconds", "[utc_time]") {
    CHECK(utc_iso8601(0) == "1970-01-01T00:00:00.000Z");
    CHECK(utc_iso8601(1714564800250) == "2024-05-01T12:00:00.250Z");
    CHECK(utc_iso8601(1714564800250, false) == "2024-05-01T12:00:00Z");
    CHECK(utc_iso8601(951782400000) == "2000-02-29T00:00:00.000Z");  // a leap day
}

TEST_CASE("utc_iso8601 rounds times before 1970 down, never to a negative millisecond", "[utc_time]") {
    CHECK(utc_iso8601(-1) == "1969-12-31T23:59:59.999Z");
    CHECK(utc_iso8601(-1000) == "1969-12-31T23:59:59.000Z");
    CHECK(utc_iso8601(-1001, false) == "1969-12-31T23:59:58Z");
}

TEST_CASE("unix_ms_now is the system clock in milliseconds", "[utc_time]") {
    const int64_t before = static_cast<int64_t>(std::time(nullptr)) * 1000;
    const int64_t now = unix_ms_now();
    CHECK(now >= before);
    CHECK(now < before + 60 * 1000);
}
