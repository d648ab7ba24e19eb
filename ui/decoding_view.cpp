#include "decoding_view.h"

#include <set>
#include <type_traits>

namespace t5s::ui {

namespace {

template <class T>
DecodingControl control_of(const GenerationField& f) {
    if constexpr (std::is_same_v<T, bool>) return DecodingControl::Switch;
    else if constexpr (std::is_same_v<T, std::string>) return DecodingControl::Text;
    else if constexpr (kListValued<T>) return DecodingControl::List;
    else if constexpr (kHasEnumNames<T>) return DecodingControl::Choice;
    else if constexpr (std::is_same_v<T, std::optional<double>>) return DecodingControl::OptionalNumber;
    else return f.ui_min < f.ui_max ? DecodingControl::Slider : DecodingControl::Number;
}

}  // namespace

bool shown_in_workspace_settings(const GenerationField& field) {
    // What ui/panels/workspace_panel.cpp (draw_settings), span_widgets.cpp (protect) and
    // score_widgets.cpp (thresholds, sort) draw; task_prefix is the panel's own box above the source.
    static const std::set<std::string> kShown = {"do_sample",
                                                 "distinct",
                                                 "no_copy",
                                                 "temperature",
                                                 "top_p",
                                                 "top_k",
                                                 "repetition_penalty",
                                                 "num_return_sequences",
                                                 "num_beams",
                                                 "max_new_tokens",
                                                 "batch_size",
                                                 "seed",
                                                 "task_prefix",
                                                 "protect",
                                                 "protect_regex",
                                                 "min_similarity",
                                                 "max_similarity",
                                                 "min_change",
                                                 "max_change",
                                                 "min_back_score",
                                                 "near_duplicate",
                                                 "rank"};
    return kShown.count(field.json) > 0;
}

std::vector<DecodingRow> advanced_decoding_rows() {
    std::vector<DecodingRow> rows;
    for (const GenerationField& f : generation_fields()) {
        if (shown_in_workspace_settings(f)) continue;
        const DecodingControl control =
            std::visit([&](auto member) { return control_of<std::decay_t<decltype(GenerationOptions{}.*member)>>(f); }, f.member);
        rows.push_back({&f, control});
    }
    return rows;
}

const char* live_label(Live live) {
    switch (live) {
        case Live::EveryStep: return "live";
        case Live::NextRequest: return "next request";
        case Live::Never: break;
    }
    return "";
}

std::string live_tooltip(Live live) {
    switch (live) {
        case Live::EveryStep: return "A change applies to a running generation at its next token.";
        case Live::NextRequest: return "A change applies from the next request: the next rows of a running batch.";
        case Live::Never: break;
    }
    return "A change applies from the next generation (a running one keeps its shape).";
}

}  // namespace t5s::ui
