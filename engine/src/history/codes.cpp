// Names and stored codes of the history's enums (public to_string / parse functions and the
// integer codes of the candidates.state column).
#include "history/codes.h"

#include "t5s/error.h"

namespace t5s {

const char* to_string(CandidateState state) {
    switch (state) {
        case CandidateState::None:
            return "none";
        case CandidateState::Accepted:
            return "accepted";
        case CandidateState::Rejected:
            return "rejected";
        case CandidateState::Edited:
            return "edited";
    }
    return "none";
}

const char* to_string(EventKind kind) {
    switch (kind) {
        case EventKind::Accept:
            return "accept";
        case EventKind::Reject:
            return "reject";
        case EventKind::Edit:
            return "edit";
        case EventKind::Undo:
            return "undo";
        case EventKind::Redo:
            return "redo";
    }
    return "accept";
}

const char* to_string(ExportFormat format) {
    switch (format) {
        case ExportFormat::Jsonl:
            return "jsonl";
        case ExportFormat::Csv:
            return "csv";
        case ExportFormat::Tsv:
            return "tsv";
        case ExportFormat::LabelStudio:
            return "labelstudio";
    }
    return "jsonl";
}

ExportFormat parse_export_format(const std::string& name) {
    if (name == "jsonl") return ExportFormat::Jsonl;
    if (name == "csv") return ExportFormat::Csv;
    if (name == "tsv") return ExportFormat::Tsv;
    if (name == "labelstudio") return ExportFormat::LabelStudio;
    throw Error(ErrorCode::InvalidArgument, "export format '" + name + "' is not one of jsonl, csv, tsv, labelstudio");
}

namespace history {

EventKind parse_event_kind(const std::string& s) {
    if (s == "accept") return EventKind::Accept;
    if (s == "reject") return EventKind::Reject;
    if (s == "edit") return EventKind::Edit;
    if (s == "undo") return EventKind::Undo;
    return EventKind::Redo;
}

CandidateState state_from_int(int64_t v) {
    switch (v) {
        case 1:
            return CandidateState::Accepted;
        case 2:
            return CandidateState::Rejected;
        case 3:
            return CandidateState::Edited;
        default:
            return CandidateState::None;
    }
}

int state_to_int(CandidateState s) {
    switch (s) {
        case CandidateState::Accepted:
            return 1;
        case CandidateState::Rejected:
            return 2;
        case CandidateState::Edited:
            return 3;
        case CandidateState::None:
            return 0;
    }
    return 0;
}

}  // namespace history
}  // namespace t5s
