#pragma once
// Protected spans in JSON (t5s/spans.h): [[start, end, label], ...] with code-point offsets, as
// spaCy / doccano write entities; also read from {"start", "end", "label"} objects (doccano's
// "start_offset" / "end_offset" too). Shared by the input reader, `generate` and `serve`.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "t5s/spans.h"

namespace t5s {

nlohmann::json spans_to_json(const std::vector<Span>& spans);
// Throws t5s::Error(InvalidArgument) starting with `where` on anything else than a list of spans.
std::vector<Span> spans_from_json(const nlohmann::json& j, const std::string& where);
// The row's spans: "spans", else "entities"; none when neither is there. Checked against the
// row's "text" (check_spans).
std::vector<Span> row_spans(const nlohmann::json& row, const std::string& where);
// Throws InvalidArgument starting with `where` when a span is not inside `text` (code points) or
// two overlap.
void check_spans(const std::string& text, const std::vector<Span>& spans, const std::string& where);

}  // namespace t5s
