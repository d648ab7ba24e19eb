#include "history/query_filter.h"

#include <algorithm>

namespace t5s::history {

namespace {

// LIKE pattern for a substring, with %, _ and the escape character taken literally.
std::string like_pattern(const std::string& text) {
    std::string out = "%";
    for (char c : text) {
        if (c == '%' || c == '_' || c == '\\') out.push_back('\\');
        out.push_back(c);
    }
    out.push_back('%');
    return out;
}

void add_text_condition(Where& w, const std::string& text) {
    const bool has_ascii_letter =
        std::any_of(text.begin(), text.end(), [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); });
    if (has_ascii_letter) {  // LIKE: ASCII case-insensitive, byte-exact for everything else
        w.add(
            "(g.input LIKE ?1 ESCAPE '\\' OR EXISTS (SELECT 1 FROM candidates c WHERE c.generation_id = g.id AND "
            "(c.text LIKE ?1 ESCAPE '\\' OR c.edited_text LIKE ?1 ESCAPE '\\')))");
        w.bind_text(like_pattern(text));
    } else {  // no case to fold (CJK, digits, punctuation): instr() is a plain byte search, ~2x faster
        w.add(
            "(instr(g.input, ?1) > 0 OR EXISTS (SELECT 1 FROM candidates c WHERE c.generation_id = g.id AND "
            "(instr(c.text, ?1) > 0 OR instr(c.edited_text, ?1) > 0)))");
        w.bind_text(text);
    }
}

}  // namespace

void Where::bind_text(std::string value) {
    binders.push_back([v = std::move(value)](Stmt& s, int i) { s.bind(i, v); });
}

void Where::bind_int(int64_t value) {
    binders.push_back([value](Stmt& s, int i) { s.bind(i, value); });
}

int Where::apply(Stmt& stmt) const {
    int i = 1;
    for (const auto& b : binders) b(stmt, i++);
    return i;
}

Where build_where(const HistoryFilter& f) {
    Where w;
    if (!f.text.empty()) add_text_condition(w, f.text);  // must come first: it uses ?1 twice
    if (f.accepted_only) w.add("EXISTS (SELECT 1 FROM candidates d WHERE d.generation_id = g.id AND d.state IN (1, 3))");
    if (!f.model.empty()) {
        const std::string p = w.next_param();
        w.add("(g.model_path = " + p + " OR g.model_hash = " + p + ")");
        w.bind_text(f.model);
    }
    if (f.from_ms != 0) {
        w.add("g.created_at >= " + w.next_param());
        w.bind_int(f.from_ms);
    }
    if (f.to_ms != 0) {
        w.add("g.created_at < " + w.next_param());
        w.bind_int(f.to_ms);
    }
    if (!f.origin_prefix.empty()) {
        const std::string p = w.next_param();
        w.add("substr(g.origin, 1, length(" + p + ")) = " + p);
        w.bind_text(f.origin_prefix);
    }
    return w;
}

const char* const kGenerationColumns =
    "g.id, g.created_at, g.input, g.settings_json, g.seed, g.model_path, g.model_hash, g.precision, g.device, "
    "g.total_ms, g.timings_json, g.origin, g.label_json";

StoredGeneration read_generation(const Stmt& s) {
    StoredGeneration g;
    g.id = s.int64(0);
    g.created_at_ms = s.int64(1);
    g.input = s.text(2);
    g.settings_json = s.text(3);
    g.adapter = adapter_of_settings_json(g.settings_json);
    g.adapter_version = adapter_version_of_settings_json(g.settings_json);
    g.seed = s.int64(4);
    g.model_path = s.text(5);
    g.model_hash = s.text(6);
    g.precision = s.text(7);
    g.device = s.text(8);
    g.total_ms = s.real(9);
    g.timings_json = s.text(10);
    g.origin = s.text(11);
    g.label_json = s.text(12);
    return g;
}

}  // namespace t5s::history
