// Catch2 v2 main for the history / export / CLI tests.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
