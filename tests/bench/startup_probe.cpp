// Returns from main at once. tests/bench.cmake links it three ways (nothing, LibTorch's CPU half,
// everything t5studio links) so startup_bench.sh can tell the libraries' start-up apart from what
// t5studio's own code does before it loads a model.
//
// It prints two CLOCK_MONOTONIC stamps (ns): when the dynamic loader has mapped and relocated every
// library (the executable's .preinit_array runs before any library's initialisers) and when main is
// entered (after every static initialiser). The parent's clock is the same, so the loading and the
// static initialisation are timed separately.
#include <cstdio>
#include <ctime>

namespace {

long long now_ns() {
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<long long>(t.tv_sec) * 1000000000LL + t.tv_nsec;
}

long long g_loaded_ns = 0;

void stamp_loaded(int, char**, char**) { g_loaded_ns = now_ns(); }

}  // namespace

__attribute__((section(".preinit_array"), used)) static void (*const k_stamp_loaded)(int, char**, char**) = stamp_loaded;

int main() {
    const long long main_ns = now_ns();
    std::printf("%lld %lld\n", g_loaded_ns, main_ns);
    return 0;
}
