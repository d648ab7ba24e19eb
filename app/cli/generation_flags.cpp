#include "cli/generation_flags.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <type_traits>

namespace t5s::cli {
namespace {

bool given(const Args& args, const GenerationField& f) {
    return *f.flag && args.has(f.flag) && (!*f.flag_word || args.get(f.flag) != f.flag_word);
}

template <class T>
void read_flag(const Args& a, const GenerationField& f, T* out) {
    const std::string flag = f.flag;
    if constexpr (std::is_same_v<T, bool>) {
        *out = f.switch_value;
    } else if constexpr (std::is_same_v<T, std::string>) {
        *out = a.get(flag);
    } else if constexpr (kHasEnumNames<T>) {
        *out = parse_enum<T>(a.get(flag));  // InvalidArgument in the table's wording, as a JSON body gets it
    } else if constexpr (std::is_same_v<T, std::optional<double>>) {
        *out = a.get_double(flag, 0.0);
    } else if constexpr (std::is_same_v<T, float>) {
        *out = static_cast<float>(a.get_double(flag, *out));
    } else {
        using limits = std::numeric_limits<T>;
        int64_t lo = limits::min(), hi = limits::max();
        if (f.flag_range) {
            if (std::isfinite(f.range.min)) lo = std::max(lo, static_cast<int64_t>(std::ceil(f.range.min)));
            if (std::isfinite(f.range.max)) hi = std::min(hi, static_cast<int64_t>(std::floor(f.range.max)));
        }
        *out = static_cast<T>(a.get_int64(flag, *out, lo, hi));
    }
}

}  // namespace

std::vector<Flag> generation_flags() {
    std::vector<Flag> out;
    for (const auto& f : generation_fields())
        if (*f.flag) out.push_back({f.flag, f.value_name, field_help(f)});
    return out;
}

std::vector<std::string> generation_flags_given(const Args& args) {
    std::vector<std::string> out;
    for (const auto& f : generation_fields())
        if (given(args, f)) out.push_back(f.json);
    return out;
}

void apply_generation_flags(const Args& args, GenerationOptions* options) {
    for (const auto& f : generation_fields()) {
        if (!given(args, f)) continue;
        std::visit([&](auto member) { read_flag(args, f, &(options->*member)); }, f.member);
    }
}

}  // namespace t5s::cli
