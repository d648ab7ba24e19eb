#pragma once
// Formats export rows as JSONL, CSV (RFC 4180) or TSV (RFC 4180 quoting with tabs); Label Studio
// imports are written by t5s::OutputWriter (history_export.cpp). See history_store.h
// for the column list.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "t5s/history_store.h"

namespace t5s::history {

struct ExportRow {
    std::string_view source;
    std::string_view target;
    bool original = false;  // kind "original" (state, score, rank empty / null)
    CandidateState state = CandidateState::None;
    double score = 0.0;
    int rank = 0;
    int64_t generation_id = 0;
    std::string_view model;
    std::string_view model_hash;
    int64_t created_at_ms = 0;
    const CandidateScores* scores = nullptr;  // with_scores: the candidate's (null/empty for originals)
    // Protected spans (JSONL only, when the generation has them): the source's, and the target's at
    // their offsets in it (code points; none for an edited candidate, whose text moved them).
    const std::vector<Span>* source_spans = nullptr;
    const std::vector<Span>* target_spans = nullptr;
    std::string_view label_json;   // the generation's input row label ("" = none)
    const Route* route = nullptr;  // a recipe candidate's route (null or empty: none)
};

std::string format_number(double value);  // shortest round-trip text, e.g. -1.25

// with_scores adds a column per score (t5s/score_names.h, in its order) after created_at; with_labels
// then label, source_spans, target_spans (CSV/TSV; JSONL has "label" whenever the row has one);
// with_route then route (CSV/TSV: the route's JSON text, empty without one; JSONL and hf-dataset
// have "route" whenever the row has one).
std::string export_header(ExportFormat format, bool with_scores = false, bool with_labels = false,
                          bool with_route = false);  // "" for JSONL
void append_export_row(ExportFormat format, const ExportRow& row, std::string& out, bool with_scores = false,
                       bool with_labels = false, bool with_route = false);

}  // namespace t5s::history
