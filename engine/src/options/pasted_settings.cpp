// Pasted generation settings (t5s/pasted_settings.h): the arguments read by python_call_text.cpp,
// each key taken through the field table or listed with why it was not.
#include "t5s/pasted_settings.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <type_traits>

#include "options/python_call_text.h"
#include "t5s/error.h"
#include "t5s/generation_config.h"
#include "t5s/generation_fields.h"
#include "t5s/settings_fields.h"

namespace t5s {
namespace {

using json = nlohmann::json;
using pasted::PastedArgument;

template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};

// What generate() takes besides settings: the model's inputs.
bool is_model_input(const std::string& key) {
    static const std::set<std::string> kInputs = {
        "input_ids",       "inputs",        "attention_mask", "decoder_input_ids", "decoder_attention_mask",
        "encoder_outputs", "inputs_embeds", "token_type_ids", "input_features",    "pixel_values",
        "labels"};
    return kInputs.count(key) > 0;
}

// generate()'s arguments that are Python objects rather than settings, and the model's token ids.
struct OtherArgument {
    const char* key;
    NotAppliedKind kind;
    const char* why;
};
constexpr OtherArgument kOtherArguments[] = {
    {"streamer", NotAppliedKind::NoEffect, "generate()'s streamer shows tokens as they come: it changes no output"},
    {"synced_gpus", NotAppliedKind::NoEffect, "generate()'s multi-GPU bookkeeping: it changes no output"},
    {"tokenizer", NotAppliedKind::NoEffect, "generate()'s tokenizer (for stop_strings): T5 Studio uses the model's own"},
    {"assistant_model", NotAppliedKind::NoEffect, "assisted decoding gives transformers the same output, faster"},
    {"assistant_tokenizer", NotAppliedKind::NoEffect, "assisted decoding gives transformers the same output, faster"},
    {"logits_processor", NotAppliedKind::Unsupported, "custom logits processors are Python code: they cannot be pasted"},
    {"stopping_criteria", NotAppliedKind::Unsupported, "custom stopping criteria are Python code: they cannot be pasted"},
    {"prefix_allowed_tokens_fn", NotAppliedKind::Unsupported, "a Python function: it cannot be pasted"},
    {"generation_config", NotAppliedKind::Unsupported,
     "a GenerationConfig object: paste GenerationConfig(...) or its JSON itself"},
    {"negative_prompt_ids", NotAppliedKind::Unsupported, "classifier-free guidance is not supported"},
    {"negative_prompt_attention_mask", NotAppliedKind::Unsupported, "classifier-free guidance is not supported"},
    {"decoder_start_token_id", NotAppliedKind::Unsupported,
     "the model's own token ids are used (its config.json and generation_config.json)"},
    {"eos_token_id", NotAppliedKind::Unsupported,
     "the model's own token ids are used (its config.json and generation_config.json)"},
    {"pad_token_id", NotAppliedKind::Unsupported,
     "the model's own token ids are used (its config.json and generation_config.json)"},
};

const OtherArgument* other_argument(const std::string& key) {
    for (const OtherArgument& a : kOtherArguments)
        if (key == a.key) return &a;
    return nullptr;
}

std::string underscored(const char* flag) {
    std::string name = flag;
    std::replace(name.begin(), name.end(), '-', '_');
    return name;
}

// The field whose transformers' spelling is `key` (generate()'s argument: num_beams, max_length).
const GenerationField* field_by_alias(const std::string& key) {
    for (const GenerationField& f : generation_fields())
        if (*f.alias && key == underscored(f.alias)) return &f;
    return nullptr;
}

template <class T>
bool holds(const GenerationField& f) {
    return std::holds_alternative<T GenerationOptions::*>(f.member);
}

bool holds_optional(const GenerationField& f) {
    return std::visit([](auto member) { return IsOptional<std::decay_t<decltype(GenerationOptions{}.*member)>>::value; },
                      f.member);
}

class Applier {
public:
    explicit Applier(const GenerationOptions& current) { out_.options = current; }

    PastedSettings finish(std::string form) {
        imply_decoding_mode();
        out_.form = std::move(form);
        return std::move(out_);
    }

    void positional(const PastedArgument& a) {
        if (a.kind == PastedArgument::Kind::Unpacked)
            not_applied(a.text, NotAppliedKind::NotASetting,
                        "unpacks a Python variable the pasted text does not show (the model's inputs; settings must be pasted as "
                        "they are)");
        else not_applied(a.text, NotAppliedKind::NotASetting, "a positional argument: generate()'s input, not a setting");
    }

    void keyword(const PastedArgument& a, bool own_field_given_too) {
        const std::string& key = a.key;
        if (is_model_input(key)) return not_applied(key, NotAppliedKind::NotASetting, "the model's input, not a setting");
        const GenerationField* field = find_generation_field(key);
        const GenerationField* alias = field ? nullptr : field_by_alias(key);
        if (!a.value) {
            if (const OtherArgument* o = other_argument(key)) return not_applied(key, o->kind, o->why);
            return not_applied(key, NotAppliedKind::NotAValue,
                               "'" + a.text + "' is a Python expression: only literal values are read (write the value)");
        }
        if (field) return set(*field, key, *a.value);
        if (alias && alias->alias_offset == 0) return set(*alias, key, *a.value);
        if (alias) {
            if (own_field_given_too)
                return not_applied(key, NotAppliedKind::Overridden,
                                   std::string(alias->json) + " is given too, and transformers lets it win over " + key);
            return set_counting_alias(*alias, key, *a.value);
        }
        if (const OtherArgument* o = other_argument(key)) return not_applied(key, o->kind, o->why);
        foreign(key, *a.value);
    }

    void not_applied(const std::string& key, NotAppliedKind kind, std::string why) {
        out_.not_applied.push_back({key, kind, std::move(why)});
    }

private:
    // One field from a JSON value: checked as the field's own text box checks it (type and range).
    void set(const GenerationField& f, const std::string& key, json value, std::string note = "") {
        if (value.is_null()) {
            if (!holds_optional(f)) return not_applied(key, NotAppliedKind::NoEffect, "None: the setting keeps its value");
        } else if (std::string(f.json) == "early_stopping" && value == "never") {
            value = false;  // transformers' third early_stopping value, read as generation_config.json reads it
            note = "transformers' \"never\" is early_stopping false";
        }
        GenerationOptions trial = out_.options;
        try {
            set_field_from_text(f, field_text(f, key, value), &trial, key);
        } catch (const Error& e) {
            return not_applied(key, NotAppliedKind::Refused, e.what());
        }
        if (const std::string outside = field_range_error(trial); !outside.empty() && outside != field_range_error(out_.options))
            return not_applied(key, NotAppliedKind::Refused, outside);
        out_.options = std::move(trial);
        named_.push_back(f.json);
        out_.applied.push_back({key, f.json, field_json_text(f, out_.options), std::move(note)});
    }

    // The text set_field_from_text reads: JSON, except a string field's own text; one string for a
    // list of strings (stop_strings="###") is a list of it, as transformers takes it.
    static std::string field_text(const GenerationField& f, const std::string& key, const json& value) {
        if (holds<std::string>(f)) {
            if (!value.is_string()) throw Error(ErrorCode::InvalidArgument, key + " must be a string");
            return value.get<std::string>();
        }
        if (value.is_string() && is_list_field(f)) return json::array({value}).dump();
        return value.dump();
    }

    // max_length / min_length: decoder tokens counting the start token, as the CLI's --max-length.
    void set_counting_alias(const GenerationField& f, const std::string& key, const json& value) {
        if (!value.is_number_integer()) return not_applied(key, NotAppliedKind::Refused, key + " must be an integer");
        const int64_t min_new = std::isfinite(f.range.min) ? static_cast<int64_t>(f.range.min) : 0;
        const int64_t lowest = min_new > 0 ? min_new + f.alias_offset : 0;
        const int64_t v = value.is_number_unsigned() ? static_cast<int64_t>(std::min<uint64_t>(value.get<uint64_t>(), INT64_MAX))
                                                     : value.get<int64_t>();
        const std::string counting =
            key + " counts the decoder start token: " + f.json + " = " + key + " - " + std::to_string(f.alias_offset);
        if (v < lowest) {
            const std::string refused = range_message(key, at_least(static_cast<double>(lowest)), static_cast<double>(v));
            return not_applied(key, NotAppliedKind::Refused, refused + "; " + counting);
        }
        set(f, key, json(std::max(min_new, v - f.alias_offset)),
            key + " " + std::to_string(v) + " counts the decoder start token");
    }

    // A key that is no field: transformers' bookkeeping, an off value, or a setting not supported.
    void foreign(const std::string& key, const json& value) {
        switch (classify_foreign_setting(key, value.dump())) {
            case ForeignSetting::Bookkeeping:
                return not_applied(key, NotAppliedKind::NoEffect, "transformers' bookkeeping: it changes no output");
            case ForeignSetting::Neutral:
                return not_applied(key, NotAppliedKind::NoEffect, value.dump() + " is transformers' default, which turns it off");
            case ForeignSetting::Unsupported:
                return not_applied(key, NotAppliedKind::Unsupported,
                                   "T5 Studio does not support it yet: the output would differ from transformers'");
            case ForeignSetting::Unknown: break;
        }
        not_applied(key, NotAppliedKind::Unknown, "not a generation setting T5 Studio or transformers knows");
    }

    bool named(const char* json_name) const { return std::find(named_.begin(), named_.end(), json_name) != named_.end(); }

    // Sampling implied as every front end implies it; beams without do_sample are beam search, and
    // penalty_alpha with top_k > 1 without do_sample contrastive search, as transformers' default
    // do_sample=False makes them (a sampling workspace would refuse or ignore the mix).
    void imply_decoding_mode() {
        GenerationOptions& o = out_.options;
        if (imply_sampling(&o, &named_)) {
            out_.applied.push_back(
                {"do_sample", "do_sample", "true", "implied: sampling settings without num_beams or do_sample sample"});
        } else if (named("num_beams") && !named("do_sample") && o.num_beams > 1 && o.do_sample) {
            o.do_sample = false;
            named_.push_back("do_sample");
            out_.applied.push_back({"do_sample", "do_sample", "false",
                                    "implied: num_beams=" + std::to_string(o.num_beams) +
                                        " without do_sample is beam search (transformers' default)"});
        } else if (named("penalty_alpha") && !named("do_sample") && o.penalty_alpha > 0.0f && o.top_k > 1 && o.do_sample) {
            o.do_sample = false;
            named_.push_back("do_sample");
            out_.applied.push_back({"do_sample", "do_sample", "false",
                                    "implied: penalty_alpha with top_k=" + std::to_string(o.top_k) +
                                        " without do_sample is contrastive search (transformers' default)"});
        }
        if (imply_contrastive_top_k(&o, &named_))
            out_.applied.push_back(
                {"top_k", "top_k", "50", "implied: penalty_alpha without top_k searches transformers' default of 50 candidates"});
    }

    PastedSettings out_;
    std::vector<std::string> named_;
};

const char* kind_words(NotAppliedKind kind) {
    switch (kind) {
        case NotAppliedKind::NotASetting: return "not a setting";
        case NotAppliedKind::NoEffect: return "no effect";
        case NotAppliedKind::NotAValue: return "not a value";
        case NotAppliedKind::Unsupported: return "not supported";
        case NotAppliedKind::Unknown: return "unknown";
        case NotAppliedKind::Refused: return "refused";
        case NotAppliedKind::Overridden: return "overridden";
    }
    return "";
}

}  // namespace

PastedSettings apply_pasted_settings(const std::string& text, const GenerationOptions& current) {
    if (text.size() > kMaxPastedSettingsBytes)
        throw Error(ErrorCode::InvalidArgument, "pasted settings: " + std::to_string(text.size()) + " bytes, more than the " +
                                                    std::to_string(kMaxPastedSettingsBytes / 1024) + " KiB that settings take");
    const pasted::PastedCall call = pasted::read_pasted_call(text);
    std::map<std::string, size_t> last;  // a key given twice: the last one counts, as in a JSON object
    for (size_t i = 0; i < call.arguments.size(); ++i)
        if (call.arguments[i].kind == PastedArgument::Kind::Keyword) last[call.arguments[i].key] = i;
    Applier applier(current);
    for (size_t i = 0; i < call.arguments.size(); ++i) {
        const PastedArgument& a = call.arguments[i];
        if (a.kind != PastedArgument::Kind::Keyword) {
            applier.positional(a);
        } else if (last[a.key] != i) {
            applier.not_applied(a.key, NotAppliedKind::Overridden, "given again later: the last value counts");
        } else {
            const GenerationField* alias = field_by_alias(a.key);
            applier.keyword(a, alias && alias->alias_offset != 0 && last.count(alias->json));
        }
    }
    return applier.finish(call.form);
}

std::vector<std::string> pasted_settings_lines(const PastedSettings& pasted) {
    std::string applied;
    for (const AppliedSetting& a : pasted.applied) {
        applied += (applied.empty() ? "" : ", ") + a.field + "=" + a.value;
        if (!a.note.empty()) applied += " (" + a.note + ")";
    }
    std::vector<std::string> lines{"pasted settings from " + pasted.form + ": " +
                                   (applied.empty() ? "nothing applied" : "applied " + applied)};
    for (const NotAppliedSetting& n : pasted.not_applied)
        lines.push_back("  not applied: " + n.key + " (" + kind_words(n.kind) + ": " + n.why + ")");
    return lines;
}

}  // namespace t5s
