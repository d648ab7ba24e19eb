#include "cli/generation_flags.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <type_traits>

namespace t5s::cli {
namespace {

bool given_as_flag(const Args& args, const GenerationField& f) {
    return *f.flag && args.has(f.flag) && (!*f.flag_word || args.get(f.flag) != f.flag_word);
}

// An alias counting more than the field (--max-length) is a flag of its own.
bool given_as_counting_alias(const Args& args, const GenerationField& f) { return f.alias_offset && args.has(f.alias); }

bool given(const Args& args, const GenerationField& f) { return given_as_flag(args, f) || given_as_counting_alias(args, f); }

// --max-length N (transformers: decoder tokens with the start token) as --max-new-tokens N-1;
// --min-length N as --min-new-tokens max(0, N-1), as transformers maps them for an encoder-decoder.
template <class T>
void read_counting_alias(const Args& a, const GenerationField& f, T* out) {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        if (given_as_flag(a, f))  // transformers lets max_new_tokens win with a warning; here it is one or the other
            throw UsageError("give --" + std::string(f.flag) + " or --" + f.alias + ", not both (--" + f.alias + " N means --" +
                             f.flag + " N-" + std::to_string(f.alias_offset) + ")");
        const int64_t min_new = std::isfinite(f.range.min) ? static_cast<int64_t>(f.range.min) : 0;
        const int64_t lo = min_new > 0 ? min_new + f.alias_offset : 0;
        const int64_t v = a.get_int64(f.alias, 0, lo, std::numeric_limits<T>::max());
        *out = static_cast<T>(std::max(min_new, v - f.alias_offset));
    } else {
        throw std::logic_error(std::string("generation field ") + f.json + ": a counting alias needs an integer field");
    }
}

template <class T>
void read_flag(const Args& a, const GenerationField& f, T* out) {
    const std::string flag = f.flag;
    if constexpr (std::is_same_v<T, bool>) {
        *out = f.switch_value;
    } else if constexpr (std::is_same_v<T, std::string>) {
        *out = a.get(flag);
    } else if constexpr (kListValued<T>) {
        throw std::logic_error("generation field " + flag + ": a list field is read by set_field_from_text");
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
    for (const auto& f : generation_fields()) {
        if (!*f.flag) continue;
        out.push_back({f.flag, f.value_name, field_help(f)});
        const std::string flag = std::string("--") + f.flag;
        if (!*f.alias) continue;
        if (!f.alias_offset) {
            out.push_back({f.alias, f.value_name, "transformers' name of " + flag, FlagKind::Single, f.flag});
        } else {
            std::string argument = f.alias;  // generate()'s own spelling: max_length
            std::replace(argument.begin(), argument.end(), '-', '_');
            out.push_back({f.alias, f.value_name,
                           "transformers' " + argument + ": decoder tokens counting the start token, so N is " + flag + " N-" +
                               std::to_string(f.alias_offset) + " (not with " + flag + ")"});
        }
    }
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
        if (given_as_counting_alias(args, f))
            std::visit([&](auto member) { read_counting_alias(args, f, &(options->*member)); }, f.member);
        else if (given_as_flag(args, f) && is_list_field(f))  // JSON text, as a request body holds it
            set_field_from_text(f, args.get(f.flag), options, std::string("--") + f.flag);
        else if (given_as_flag(args, f)) std::visit([&](auto member) { read_flag(args, f, &(options->*member)); }, f.member);
    }
}

}  // namespace t5s::cli
