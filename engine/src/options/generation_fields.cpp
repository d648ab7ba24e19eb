// The generation options' field table (t5s/generation_fields.h) and what derives from it without
// a front end: JSON both ways, the named and live merges, the range checks.
#include "t5s/generation_fields.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <type_traits>

#include "options/field_values.h"
#include "t5s/error.h"
#include "t5s/help_defaults.h"
#include "t5s/settings_fields.h"

namespace t5s {
namespace {

using O = GenerationOptions;
constexpr Live kNext = Live::NextRequest, kStep = Live::EveryStep;

constexpr auto row = settings_row<OptionMember>;

// The search: lengths, beams (plain and diverse), sampling and the repetition penalties.
std::vector<GenerationField> search_rows() {
    // clang-format off
    return {
        row("max_new_tokens", &O::max_new_tokens, "max-new-tokens", "N", "most tokens generated per candidate (default {default})")
            .live_from(kNext).within(at_least(1)).widget(1, 512).checked_at_flag().transformers_flag("max-length", 1),
        row("min_new_tokens", &O::min_new_tokens, "min-new-tokens", "N", "</s> is forbidden before N tokens (default {default})")
            .live_from(kStep).within(at_least(0)).transformers_flag("min-length", 1),
        row("num_beams", &O::num_beams, "beams", "K", "beam search with K beams (default {default}: greedy, or plain sampling)")
            .within(at_least(1)).widget(1, 16).transformers_flag("num-beams"),
        row("length_penalty", &O::length_penalty, "length-penalty", "X", "beam scores are divided by length^X (default {default:point})").live_from(kStep),
        row("early_stopping", &O::early_stopping, "early-stopping", "", "beam search stops as soon as K hypotheses are done (transformers' early_stopping)"),
        row("num_return_sequences", &O::num_return_sequences, "num-return", "N", "candidates per input (default {default}; at most --beams unless sampling)")
            .within(at_least(1)).widget(1, 16).transformers_flag("num-return-sequences"),
        row("num_beam_groups", &O::num_beam_groups, "num-beam-groups", "G", "diverse beam search: the K beams in G groups that avoid each other's tokens (default {default} = off; K divisible by G; needs --diversity-penalty)")
            .within(at_least(1)),
        row("diversity_penalty", &O::diversity_penalty, "diversity-penalty", "X", "with --num-beam-groups: a group's score of a token drops by X per earlier group that took it at this step (default {default:point})")
            .live_from(kStep).within(at_least(0)),
        row("do_sample", &O::do_sample, "sample", "", "sample tokens instead of taking the most likely (implied by --temperature, --top-k or --top-p without --beams)")
            .transformers_flag("do-sample"),
        row("temperature", &O::temperature, "temperature", "X", "divide the logits by X when sampling (default {default:point}; > 0)")
            .live_from(kStep).widget(0.05f, 2.0f),
        row("top_k", &O::top_k, "top-k", "K", "sample from the K most likely tokens only (default {default} = off, unlike transformers' 50)")
            .live_from(kStep).within(at_least(0, ">= 0 (0 = off)")).widget(0, 200),
        row("top_p", &O::top_p, "top-p", "P", "nucleus sampling: the smallest set of tokens with mass >= P, in (0, 1] (default {default} = off)")
            .live_from(kStep).within(above_to(0, 1)).widget(0.05f, 1.0f),
        row("repetition_penalty", &O::repetition_penalty, "repetition-penalty", "R", "CTRL penalty on tokens already generated (default {default:point} = off)")
            .live_from(kStep).within(above(0)).widget(1.0f, 2.0f),
        row("no_repeat_ngram_size", &O::no_repeat_ngram_size, "no-repeat-ngram", "N", "never repeat an n-gram of N tokens (default {default} = off)")
            .live_from(kStep).within(at_least(0)),
    };
    // clang-format on
}

// More of transformers' logits processors and warpers: its names, flags in its spelling.
std::vector<GenerationField> processor_rows() {
    // clang-format off
    return {
        row("encoder_no_repeat_ngram_size", &O::encoder_no_repeat_ngram_size, "encoder-no-repeat-ngram-size", "N", "never copy an n-gram of N tokens from the input (default {default} = off)")
            .live_from(kStep).within(at_least(0)),
        row("encoder_repetition_penalty", &O::encoder_repetition_penalty, "encoder-repetition-penalty", "R", "transformers' penalty on the input's tokens: R > 1 favours them, R < 1 avoids them (default {default:point} = off)")
            .live_from(kStep).within(above(0)),
        row("bad_words_ids", &O::bad_words_ids, "bad-words-ids", "JSON", "token sequences never generated, as JSON: [[12, 7], [9]] (default none)"),
        row("bad_words", &O::bad_words, "bad-words", "LIST", "words never generated, comma-separated (\"w1,w2\"): each banned as its tokens read mid-sentence, as bad_words_ids"),
        row("min_p", &O::min_p, "min-p", "P", "sampling (implies --sample): drop tokens less likely than P x the most likely, in [0, 1] (default {default} = off)")
            .live_from(kStep).within(from_to(0, 1)),
        row("typical_p", &O::typical_p, "typical-p", "P", "sampling (implies --sample): keep the locally typical tokens of mass P, in (0, 1] (default {default} = off)")
            .live_from(kStep).within(above_to(0, 1)),
        row("epsilon_cutoff", &O::epsilon_cutoff, "epsilon-cutoff", "E", "sampling (implies --sample): drop tokens of probability below E, in [0, 1) (default {default} = off)")
            .live_from(kStep).within(from_below(0, 1)),
        row("eta_cutoff", &O::eta_cutoff, "eta-cutoff", "E", "sampling (implies --sample): drop tokens of probability below min(E, sqrt(E) x exp(-entropy)), in [0, 1) (default {default} = off)")
            .live_from(kStep).within(from_below(0, 1)),
        row("suppress_tokens", &O::suppress_tokens, "suppress-tokens", "IDS", "token ids never generated, as JSON: [12, 7] (default none)"),
        row("begin_suppress_tokens", &O::begin_suppress_tokens, "begin-suppress-tokens", "IDS", "token ids never generated as the first token, as JSON: [12, 7] (default none)"),
        row("forced_bos_token_id", &O::forced_bos_token_id, "forced-bos-token-id", "ID", "the token id every candidate starts with (default {default} = none)")
            .within(at_least(-1, ">= 0, or -1 for none")),
        row("forced_eos_token_id", &O::forced_eos_token_id, "forced-eos-token-id", "IDS", "token id (or JSON list of ids) forced as the last token when a candidate reaches the length limit (default none)"),
        row("sequence_bias", &O::sequence_bias, "sequence-bias", "JSON", "bias added to a token sequence's last token where the candidate ends with the rest, as JSON: [[[12, 7], -2.0]] (default none)"),
        row("exponential_decay_length_penalty", &O::exponential_decay_length_penalty, "exponential-decay-length-penalty", "JSON", "[start_index, decay_factor]: from start_index on, </s> gains decay_factor^(length - start_index) - 1 (default none)")
            .live_from(kStep),
        row("renormalize_logits", &O::renormalize_logits, "renormalize-logits", "", "log-softmax the scores again after every processor (transformers' renormalize_logits)")
            .live_from(kStep),
        row("max_time", &O::max_time, "max-time", "SECONDS", "stop decoding a batch after this many seconds, keeping what it has (default none)").within(above(0)),
        row("stop_strings", &O::stop_strings, "stop-strings", "JSON", "a candidate ends once its text ends with one of these strings, as JSON [\".\", \"!\"] or one plain string (default none)"),
        row("force_words_ids", &O::force_words_ids, "force-words-ids", "JSON", "constrained beam search: token sequences every candidate holds, as JSON [[12, 7], [[9], [4, 5]]] (a list of lists: any one of them)"),
        row("force_words", &O::force_words, "force-words", "LIST", "constrained beam search: words every candidate holds, comma-separated; \"a|b\" is satisfied by either (each as it reads mid-sentence)"),
        row("penalty_alpha", &O::penalty_alpha, "penalty-alpha", "A", "contrastive search with --top-k K > 1 and no sampling: the degeneration penalty's weight (default {default} = off)")
            .within(at_least(0)).widget(0, 1),
    };
    // clang-format on
}

// The run (seed, rounds, batches, inputs), then what happens to the candidates: filters, ranking, protected spans.
std::vector<GenerationField> candidate_rows() {
    // clang-format off
    return {
        row("seed", &O::seed, "seed", "S", "sampling seed (default {default}: a random one; the seed used is in the JSON results)"),
        row("no_copy", &O::no_copy, "no-copy", "", "drop candidates identical to the input (same normalisation)").live_from(kNext),
        row("distinct", &O::distinct, "distinct", "", "drop duplicate candidates (whitespace and width normalised)").live_from(kNext),
        row("max_rounds", &O::max_rounds, "max-rounds", "N", "with --distinct/--no-copy and sampling: sample again up to N rounds (default {default})")
            .within(at_least(1)),
        row("batch_size", &O::batch_size, "batch-size", "B", "inputs generated together (default {default}), or auto: measured from free memory")
            .within(at_least(1)).widget(1, 64).also_takes("auto"),
        row("max_source_tokens", &O::max_source_tokens, "max-source-tokens", "N", "longest input in tokens (default: the model's n_positions, else 512); longer is an error")
            .within(at_least(0, ">= 0 (0 = the model's limit)")).checked_at_flag(),
        row("task_prefix", &O::task_prefix, "prefix", "TEXT", "task prefix for every input and, for back_score, every candidate (e.g. \"paraphrase: \")"),
        row("rank", &O::rank, "rank", "R", "how candidates are ordered, best first (auto = similarity with --embedder, else back_score; none = decoding order, the default)")
            .live_from(kStep),
        row("min_similarity", &O::min_similarity, "min-similarity", "X", "drop candidates whose similarity to the input is below X, in [-1, 1]")
            .live_from(kStep).within(from_to(-1, 1)).widget(-1, 1),
        row("max_similarity", &O::max_similarity, "max-similarity", "X", "drop candidates whose similarity is above X (near copies)")
            .live_from(kStep).within(from_to(-1, 1)).widget(-1, 1),
        row("min_change", &O::min_change, "min-change", "X", "drop candidates whose change (1 - chrF with the input) is below X, in [0, 1]")
            .live_from(kStep).within(from_to(0, 1)).widget(0, 1),
        row("max_change", &O::max_change, "max-change", "X", "drop candidates whose change is above X, in [0, 1]").live_from(kStep).within(from_to(0, 1)).widget(0, 1),
        row("min_back_score", &O::min_back_score, "min-back-score", "X", "drop candidates whose back_score (mean log-prob of the input given them) is below X")
            .live_from(kStep).within(at_most(0, "a finite log-probability <= 0")).widget(-10, 0),
        row("near_duplicate", &O::near_duplicate, "near-duplicate", "X", "drop a candidate whose chrF with a better-ranked one is above X, in (0, 1]")
            .live_from(kStep).within(above_to(0, 1)).widget(0.05f, 1),
        row("model_scores", &O::model_scores, "no-model-scores", "", "skip back_score and similarity (a model pass per candidate) unless a filter or --rank uses them")
            .live_from(kStep).switch_sets(false),
        row("drop_invalid_text", &O::drop_invalid_text, "keep-invalid-text", "", "keep candidates holding U+FFFD or invalid UTF-8 (a broken byte-fallback sequence); dropped as invalid_text by default")
            .live_from(kNext).switch_sets(false),
        row("protect", &O::protect, "protect", "LIST", "keep these spans exactly: placeholders,numbers,urls,emails (with --input rows' \"spans\"); each candidate lists them under \"spans\"")
            .live_from(kNext),
        row("protect_regex", &O::protect_regex, "protect-regex", "R", "also keep every match of this regex (RE2 syntax: no backreferences or lookaround; label \"regex\")")
            .live_from(kNext),
    };
    // clang-format on
}

// Every option, in the order of the JSON the history stores. A help line states its default as
// {default} (or {default:point}: 1.0), filled from GenerationOptions{} (t5s/help_defaults.h).
std::vector<GenerationField> generation_rows() {
    std::vector<GenerationField> rows = search_rows();
    for (auto part : {processor_rows(), candidate_rows()}) rows.insert(rows.end(), part.begin(), part.end());
    return rows;
}

// "%g", not settings_number_text's "%.15g": a float field's value reads in these messages (HTTP
// error bodies, the app's) as it always has: 0.1f is "0.1" here, "0.100000001490116" there.
std::string number_text(double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", v);
    return text;
}

// "" when `f` of `o` is inside its range (strings, switches and enums have none: an enum field
// holds one of its names by its type).
std::string range_error(const GenerationField& f, const GenerationOptions& o) {
    return std::visit(
        [&](auto member) -> std::string {
            const auto& v = o.*member;
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, bool> || kHasEnumNames<T> || kListValued<T>) {
                return "";
            } else {
                std::optional<double> d;
                if constexpr (std::is_same_v<T, std::optional<double>>) d = v;
                else d = static_cast<double>(v);
                if (!d || settings_in_range(f.range, *d)) return "";
                return range_message(f.json, f.range, number_text(*d));
            }
        },
        f.member);
}

// One JSON value into one field, type- and range-checked: a float or an out-of-range number cast
// into an int field was undefined behaviour (found by tests/fuzz/fuzz_generation_options).
template <class T>
void read_value(const nlohmann::json& v, const char* name, T* out) {
    auto bad = [&](const char* expected) {
        throw Error(ErrorCode::InvalidArgument, std::string("generation settings: '") + name + "' must be " + expected);
    };
    if constexpr (std::is_same_v<T, std::optional<double>>) {
        double d = 0.0;
        read_value(v, name, &d);
        *out = d;
    } else if constexpr (kListValued<T>) {
        field_values::from_json(v, name, out);
    } else if constexpr (std::is_same_v<T, std::string>) {
        if (!v.is_string()) bad("a string");
        *out = v.get<std::string>();
    } else if constexpr (kHasEnumNames<T>) {
        if (!v.is_string()) bad(("one of " + enum_names_text<T>()).c_str());
        try {
            *out = parse_enum<T>(v.get<std::string>());
        } catch (const Error& e) {  // the table's one wording, in the settings' context
            throw Error(ErrorCode::InvalidArgument, std::string("generation settings: ") + e.what());
        }
    } else if constexpr (std::is_same_v<T, bool>) {
        if (!v.is_boolean()) bad("true or false");
        *out = v.get<bool>();
    } else if constexpr (std::is_integral_v<T>) {
        using limits = std::numeric_limits<T>;
        if (!v.is_number_integer()) bad("an integer");
        const bool fits = v.is_number_unsigned() ? v.get<uint64_t>() <= static_cast<uint64_t>(limits::max())
                                                 : v.get<int64_t>() >= limits::min() && v.get<int64_t>() <= limits::max();
        if (!fits) bad("an integer in range");
        *out = static_cast<T>(v.get<int64_t>());
    } else {
        if (!v.is_number()) bad("a number");
        const double d = v.get<double>();
        if (!std::isfinite(d) || std::fabs(d) > static_cast<double>(std::numeric_limits<T>::max())) bad("a finite number");
        *out = static_cast<T>(d);
    }
}

void copy_field(const GenerationField& f, const GenerationOptions& from, GenerationOptions* into) {
    std::visit([&](auto member) { into->*member = from.*member; }, f.member);
}

}  // namespace

const std::vector<GenerationField>& generation_fields() {
    static const std::vector<GenerationField> fields = generation_rows();
    return fields;
}

std::vector<std::string> field_names(const GenerationField& field) {
    return std::visit(
        [](auto member) {
            using T = std::decay_t<decltype(GenerationOptions{}.*member)>;
            if constexpr (kHasEnumNames<T>) return enum_names<T>();
            else return std::vector<std::string>{};
        },
        field.member);
}

std::string field_help(const GenerationField& field) {
    static const GenerationOptions defaults;
    const std::string help =
        std::visit([&](auto member) { return help_with_default(field.help, defaults.*member, field.json); }, field.member);
    const std::vector<std::string> names = field_names(field);
    if (names.empty()) return help;
    return "one of " + detail::list_names(names) + ": " + help;
}

const GenerationField* find_generation_field(std::string_view json_name) {
    return find_settings_field(generation_fields(), json_name);
}

TokenIdLists token_id_lists_from_json(const std::string& json_text, const std::string& what) {
    const nlohmann::json j = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
    TokenIdLists lists;
    field_values::from_json(j.is_discarded() ? nlohmann::json(json_text) : j, what, &lists);
    return lists;
}

bool is_list_field(const GenerationField& field) {
    return std::visit([](auto member) { return kListValued<std::decay_t<decltype(GenerationOptions{}.*member)>>; }, field.member);
}

std::string field_json_text(const GenerationField& field, const GenerationOptions& options) {
    const nlohmann::json j = nlohmann::json::parse(generation_options_to_json(options));
    return j.at(field.json).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void set_field_from_text(const GenerationField& field, const std::string& text, GenerationOptions* options,
                         const std::string& what) {
    const std::string name = what.empty() ? field.json : what;
    std::visit(
        [&](auto member) {
            using T = std::decay_t<decltype(options->*member)>;
            T value = options->*member;
            if constexpr (std::is_same_v<T, std::string>) {
                value = text;
            } else {
                // Typed text is JSON; what is not (a bare word) is one string, which only a string
                // list or an enum takes.
                nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
                if (j.is_discarded() || (std::is_same_v<T, std::vector<std::string>> && !j.is_array() && !j.is_null())) j = text;
                if (j.is_null() || (text.empty() && kListValued<T>)) value = T{};
                else read_value(j, name.c_str(), &value);
            }
            GenerationOptions checked = *options;
            checked.*member = value;
            if (std::string outside = range_error(field, checked); !outside.empty())
                throw Error(ErrorCode::InvalidArgument, what.empty() ? outside : name + ": " + outside);
            options->*member = std::move(value);
        },
        field.member);
}

std::string generation_options_to_json(const GenerationOptions& options) {
    nlohmann::ordered_json j;
    for (const auto& f : generation_fields()) {
        std::visit(
            [&](auto member) {
                const auto& v = options.*member;
                using T = std::decay_t<decltype(v)>;
                if constexpr (std::is_same_v<T, std::optional<double>>)
                    j[f.json] =
                        v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);  // an empty filter is null (off)
                else if constexpr (kHasEnumNames<T>) j[f.json] = to_string(v);  // by its name, as before it was an enum
                else if constexpr (kListValued<T>) j[f.json] = field_values::to_json(v);
                else j[f.json] = v;
            },
            f.member);
    }
    return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

GenerationOptions generation_options_from_json(const std::string& json) {
    nlohmann::json j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) throw Error(ErrorCode::InvalidArgument, "generation settings: not a JSON object");
    GenerationOptions options;
    try {
        for (const auto& f : generation_fields()) {
            const auto it = j.find(f.json);
            if (it == j.end() || it->is_null()) continue;
            std::visit([&](auto member) { read_value(*it, f.json, &(options.*member)); }, f.member);
        }
    } catch (const nlohmann::json::exception& e) {
        throw Error(ErrorCode::InvalidArgument, std::string("generation settings: ") + e.what());
    }
    return options;
}

GenerationOptions with_named_fields(GenerationOptions into, const GenerationOptions& from,
                                    const std::vector<std::string>& named) {
    for (const auto& name : named) {
        const GenerationField* f = find_generation_field(name);
        if (!f) throw Error(ErrorCode::InvalidArgument, "unknown generation setting '" + name + "'");
        copy_field(*f, from, &into);
    }
    return into;
}

GenerationOptions with_live_fields(GenerationOptions into, const GenerationOptions& from, Live when) {
    for (const auto& f : generation_fields()) {
        if (f.live == Live::EveryStep || (when == Live::NextRequest && f.live == Live::NextRequest)) copy_field(f, from, &into);
    }
    return into;
}

std::string field_range_error(const GenerationOptions& options) {
    for (const auto& f : generation_fields()) {
        std::string error = range_error(f, options);
        if (!error.empty()) return error;
    }
    return "";
}

}  // namespace t5s
