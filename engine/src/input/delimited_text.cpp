#include "input/delimited_text.h"

namespace t5s {

bool read_delimited_record(std::istream& in, char sep, int64_t* line_no, DelimitedRecord* rec) {
    rec->fields.clear();
    rec->unterminated_quote = false;
    rec->stray_quote = false;
    std::string line;
    if (!std::getline(in, line)) return false;
    rec->first_line = ++*line_no;
    std::string cur;
    bool quoted = false, any = false, closed = false;  // closed: the last character closed a quoted field
    for (size_t i = 0;; ++i) {
        if (i >= line.size()) {
            if (!quoted) break;
            if (!std::getline(in, line)) {  // the quote never closes
                rec->unterminated_quote = true;
                break;
            }
            ++*line_no;
            cur += '\n';
            i = static_cast<size_t>(-1);
            continue;
        }
        const char ch = line[i];
        any = true;
        if (closed && ch != sep && !(ch == '\r' && i + 1 == line.size())) rec->stray_quote = true;
        closed = false;
        if (quoted) {
            if (ch != '"') {
                cur += ch;
            } else if (i + 1 < line.size() && line[i + 1] == '"') {
                cur += '"';
                ++i;
            } else {
                quoted = false;
                closed = true;
            }
        } else if (ch == '"' && cur.empty()) {
            quoted = true;
        } else if (ch == sep) {
            rec->fields.push_back(std::move(cur));
            cur.clear();
        } else if (!(ch == '\r' && i + 1 == line.size())) {
            cur += ch;
        }
    }
    if (any || !rec->fields.empty()) rec->fields.push_back(std::move(cur));
    rec->last_line = *line_no;
    return true;
}

void append_delimited_field(std::string_view field, char separator, std::string& out) {
    const char specials[] = {separator, '"', '\r', '\n', '\0'};
    if (field.find_first_of(specials) == std::string_view::npos) {
        out.append(field.data(), field.size());
        return;
    }
    out.push_back('"');
    for (char c : field) {
        if (c == '"') out.push_back('"');
        out.push_back(c);
    }
    out.push_back('"');
}

}  // namespace t5s
