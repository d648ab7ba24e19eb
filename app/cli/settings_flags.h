#pragma once
// A settings table's flags (t5s/settings_fields.h): the Flag rows of a command's --help and the
// parsing of what was given, both from the table. train, learn and serve declare their settings
// this way; the flags that are not a setting (--history, --list) stay rows of the command's own table.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "common/args.h"
#include "t5s/help_defaults.h"
#include "t5s/settings_fields.h"

namespace t5s::cli {
namespace settings_flag_detail {
template <class M>
constexpr bool kIsList = false;  // a member pointer to a list of strings: a repeatable flag
template <class C>
constexpr bool kIsList<std::vector<std::string> C::*> = true;
}  // namespace settings_flag_detail

// One Flag per row with a flag, in table order, its help stating the default `defaults` holds (the
// settings struct default-constructed); the runtime group (`runtime`: --device, --threads, declared
// once for every command) stands where the table's first Runtime row is.
template <class Table, class S>
std::vector<Flag> settings_flags(const Table& fields, const S& defaults, const std::vector<Flag>& runtime = {}) {
    std::vector<Flag> out;
    bool runtime_placed = false;
    for (const auto& f : fields) {
        if (!*f.flag) continue;
        if (f.use == FlagUse::Runtime) {
            if (!runtime_placed) out.insert(out.end(), runtime.begin(), runtime.end());
            runtime_placed = true;
            continue;
        }
        const bool list = std::visit([](auto m) { return settings_flag_detail::kIsList<decltype(m)>; }, f.member);
        const FlagKind kind = f.use == FlagUse::Model ? FlagKind::Model
                              : list && f.use == FlagUse::Table
                                  ? FlagKind::Repeatable  // a Custom list is one value (--devices a,b)
                                  : FlagKind::Single;
        out.push_back({f.flag, f.value_name, settings_field_help(f, defaults), kind});
    }
    return out;
}

// `rows` placed right after the flag `after` of `flags` (a command's own flags among a table's).
inline std::vector<Flag> with_flags_after(std::vector<Flag> flags, const std::string& after, const std::vector<Flag>& rows) {
    for (size_t i = 0; i < flags.size(); ++i)
        if (flags[i].name == after) {
            flags.insert(flags.begin() + static_cast<std::ptrdiff_t>(i) + 1, rows.begin(), rows.end());
            return flags;
        }
    throw std::logic_error("with_flags_after: no flag --" + after);
}

namespace settings_flag_detail {

template <class Row, class T>
void read_flag(const Args& a, const Row& f, T* out) {
    const std::string flag = f.flag;
    if constexpr (std::is_same_v<T, bool>) {
        *out = f.switch_value;
    } else if constexpr (std::is_same_v<T, std::string>) {
        *out = a.get(flag);
    } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
        *out = a.all(flag);
    } else if constexpr (std::is_enum_v<T>) {
        *out = f.flag_range ? a.get_enum(flag, *out) : parse_enum<T>(a.get(flag));  // unknown name: usage error, or bad input
    } else if constexpr (std::is_floating_point_v<T>) {
        const double v = a.get_double(flag, static_cast<double>(*out));
        if (f.flag_range && !settings_in_range(f.range, v)) throw UsageError(range_message("--" + flag, f.range, a.get(flag)));
        *out = static_cast<T>(v);
    } else if constexpr (std::is_unsigned_v<T>) {
        *out = static_cast<T>(a.get_int64(flag, 0));  // --seed -1 is the largest seed, as it always was
    } else {
        using limits = std::numeric_limits<T>;
        int64_t lo = limits::min(), hi = limits::max();
        if (f.flag_range && std::isfinite(f.range.min)) lo = std::max(lo, static_cast<int64_t>(std::ceil(f.range.min)));
        if (f.flag_range && std::isfinite(f.range.max)) hi = std::min(hi, static_cast<int64_t>(std::floor(f.range.max)));
        *out = static_cast<T>(a.get_int64(flag, *out, lo, hi));
    }
}

}  // namespace settings_flag_detail

// The given flags of the table's Table and Model rows over `settings`: a malformed number is a usage
// error naming the flag, and so is a value out of range where the row checks at the flag; the rest
// is for validation. Runtime and Custom rows are the command's to read.
template <class Table, class S>
void apply_settings_flags(const Args& args, const Table& fields, S* settings) {
    for (const auto& f : fields) {
        if (!*f.flag || !args.has(f.flag) || f.use == FlagUse::Runtime || f.use == FlagUse::Custom) continue;
        std::visit([&](auto member) { settings_flag_detail::read_flag(args, f, &field_ref(*settings, member)); }, f.member);
    }
}

}  // namespace t5s::cli
