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

// The names a row, a CSV/TSV header or a request gives its spans under, in the order they are
// looked for: T5 Studio's own "spans", then "entities" (doccano's and spaCy's word).
inline constexpr const char* kSpanFieldNames[] = {"spans", "entities"};
bool is_span_field(const std::string& name);
// Where a row's or a request's spans are, the one rule for every reader (input files, Label
// Studio, serve): "spans", else "entities". A null counts as not given (JSON's "no value"), so
// {"spans": null, "entities": [...]} reads the entities; with both given, "spans" is read, as the
// column rule takes the first name it lists. A given field of the wrong type is returned all the
// same: spans_from_json names it, rather than another field being read in its place. nullptr when
// neither is given (or `row` is no object); `name_out`, when set, gets the field's name.
const nlohmann::json* spans_field(const nlohmann::json& row, const char** name_out = nullptr);
// Throws InvalidArgument starting with `where` when a span is not inside `text` (code points) or
// two overlap.
void check_spans(const std::string& text, const std::vector<Span>& spans, const std::string& where);

}  // namespace t5s
