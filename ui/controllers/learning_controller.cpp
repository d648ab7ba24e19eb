#include "controllers/learning_controller.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <utility>

namespace t5s::ui {

namespace {

int64_t now_unix_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string fixed2(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.2f", v);
    return b;
}

const AdapterVersionEntry* entry_of(const LearningVm& l, int64_t version) {
    for (const auto& v : l.versions)
        if (v.version == version) return &v;
    return nullptr;
}

}  // namespace

std::string learning_dir_for(const std::string& root, const std::string& model_dir) {
    uint32_t h = 2166136261u;  // FNV-1a: stable across runs and builds
    for (unsigned char c : model_dir) h = (h ^ c) * 16777619u;
    std::string path = model_dir;
    while (path.size() > 1 && (path.back() == '/' || path.back() == '\\')) path.pop_back();
    std::string name = path.substr(path.find_last_of("/\\") == std::string::npos ? 0 : path.find_last_of("/\\") + 1);
    for (char& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
    if (name.empty() || name == "." || name == "..") name = "model";
    char hex[16];
    std::snprintf(hex, sizeof hex, "%08x", h);
    return root + "/" + name + "-" + hex;
}

std::string ago_text(double seconds) {
    if (seconds < 10) return "just now";
    if (seconds < 60) return std::to_string(int(seconds)) + " s ago";
    if (seconds < 3600) return std::to_string(int(seconds / 60)) + " min ago";
    if (seconds < 86400) return std::to_string(int(seconds / 3600)) + " h ago";
    return std::to_string(int(seconds / 86400)) + " d ago";
}

int64_t parse_iso_utc_ms(const std::string& text) {
    std::tm tm{};
    int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
    char z = 0;
    if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c", &y, &mo, &d, &h, &mi, &s, &z) != 7 || z != 'Z') return 0;
    tm.tm_year = y - 1900, tm.tm_mon = mo - 1, tm.tm_mday = d, tm.tm_hour = h, tm.tm_min = mi, tm.tm_sec = s;
    return int64_t(timegm(&tm)) * 1000;
}

std::string learning_status_line(const LearningVm& l, int64_t now_ms) {
    if (l.round_job) {
        std::string s = "learning… ";
        return s + (l.total_steps > 0 ? "step " + std::to_string(l.step) + "/" + std::to_string(l.total_steps)
                                      : "scoring the held-out pairs");
    }
    const std::string waiting = std::to_string(l.new_pairs) + "/" + std::to_string(l.round.every) + " new pairs";
    const AdapterVersionEntry* v = entry_of(l, l.current);
    if (!v) return (l.current > 0 ? "adapter v" + std::to_string(l.current) : std::string("base model")) + " · " + waiting;
    std::string s = "adapter v" + std::to_string(v->version) + " · " + std::to_string(v->pairs_total) + " pairs";
    if (v->loss_before >= 0 && v->loss_after >= 0)
        s += " · held-out loss " + fixed2(v->loss_before) + " → " + fixed2(v->loss_after);
    const int64_t t = parse_iso_utc_ms(v->created_at);
    if (t > 0) s += " · " + ago_text(double(now_ms - t) / 1000.0);
    return s;
}

std::string round_summary(const LearningRoundResult& r) {
    if (r.status == "waiting") return "no round: " + r.why;
    std::string s = "round " + std::to_string(r.round) + " " + r.status + ": held-out loss " + fixed2(r.loss_before) + " → " +
                    fixed2(r.loss_after) + ", " + std::to_string(r.pairs_new) + " new pairs, " +
                    std::to_string(int(r.elapsed_s + 0.5)) + " s";
    if (r.status == "adopted") s += " (v" + std::to_string(r.version) + ")";
    return s;
}

void LearningController::open_learning() {
    s.learn.open = true;
    s.learn.focus = true;
    refresh();
}

void LearningController::set_enabled(bool on) {
    s.learn.enabled = on;
    ctx.log(false, on ? "learning from your decisions: a round every " + std::to_string(s.learn.round.every) +
                            " accepted/edited candidates"
                      : "learning from your decisions: off");
    maybe_start_round();
}

void LearningController::model_loaded() {
    auto& l = s.learn;
    if (!s.model.info || l.root.empty()) return;
    l.adapter_dir = learning_dir_for(l.root, s.model.info->dir.string());
    l.versions.clear();
    l.current = 0;
    l.resume_current = true;
    l.list_job = 0;  // a listing of the previous model's folder is ignored when it comes
    refresh();
}

void LearningController::refresh() {
    auto& l = s.learn;
    if (l.adapter_dir.empty() || l.list_job) return;
    l.list_job = submit(ListAdapterVersions{l.adapter_dir});
}

bool LearningController::learn_now() {
    auto& l = s.learn;
    l.error.clear();
    if (l.round_job) l.error = "a round is already running";
    else if (!s.model.info) l.error = "open a model first: a round continues its adapter";
    else if (l.adapter_dir.empty()) l.error = "no learning folder";
    if (!l.error.empty()) return false;
    LearnNow c;
    c.model_dir = s.model.info->dir;
    c.adapter_dir = l.adapter_dir;
    c.task_prefix = s.ws.task_prefix;
    c.round = l.round;
    l.round_job = submit(std::move(c));
    if (!l.round_job) return false;
    l.step = l.total_steps = 0;
    l.new_pairs = 0;
    s.job_kind[l.round_job] = "learning";
    ctx.log(false, "learning round started on the history (" + l.adapter_dir + ")");
    return true;
}

void LearningController::cancel_round() {
    if (s.learn.round_job) ctx.send(Cancel{s.learn.round_job});
}

void LearningController::use_version(int64_t version) {
    auto& l = s.learn;
    if (l.adapter_dir.empty() || l.use_job) return;
    if (!s.model.info) {
        l.error = "open a model first";
        return;
    }
    l.use_job = submit(UseAdapterVersion{l.adapter_dir, version});
}

void LearningController::decision_recorded(EventKind kind) {
    if (kind != EventKind::Accept && kind != EventKind::Edit) return;
    ++s.learn.new_pairs;
    maybe_start_round();
}

void LearningController::maybe_start_round() {
    const auto& l = s.learn;
    if (l.enabled && !l.round_job && s.model.info && l.new_pairs >= std::max<int64_t>(1, l.round.every)) learn_now();
}

void LearningController::apply(const Event& event) {
    auto& l = s.learn;
    if (const auto* u = std::get_if<TrainingUpdate>(&event)) {
        if (u->job == l.round_job && u->event.kind == TrainingEvent::Kind::Step)
            l.step = u->event.step, l.total_steps = u->event.total_steps;
    } else if (const auto* d = std::get_if<LearningRoundDone>(&event)) {
        if (d->job == l.round_job) l.round_job = 0;
        l.last = d->result;
        l.last_done_ms = now_unix_ms();
        l.last_curve.assign(d->train_losses.begin(), d->train_losses.end());
        ctx.log(d->result.status == "rejected", round_summary(d->result));
        maybe_start_round();  // pairs accepted during the round may already make the next one
    } else if (const auto* v = std::get_if<AdapterVersionsListed>(&event)) {
        if (v->job == l.list_job) l.list_job = 0;
        if (v->adapter_dir.string() != l.adapter_dir) return;  // a listing of another model's folder
        l.current = v->current;
        l.versions = v->versions;
        l.rejected_rounds = v->rejected_rounds;
        // The app restarted (or the model was reopened) with the switch on: continue with the version
        // the loop was using, unless the model was opened with an adapter of its own.
        if (std::exchange(l.resume_current, false) && l.enabled && l.current > 0 && s.model.active_adapter.empty())
            use_version(l.current);
    } else if (const auto* a = std::get_if<AdapterSet>(&event)) {
        // From "use this one", or the switch the engine made after an adopted round.
        if (a->job == l.use_job) l.use_job = 0;
        s.model.active_adapter = a->dir.string();
        ctx.log(false, a->dir.empty() ? std::string("learning: back to the base model") : "learning: using " + a->dir.string());
    }
}

void LearningController::failed(const JobFailed& f) {
    auto& l = s.learn;
    if (f.job == l.round_job) l.round_job = 0, s.job_kind.erase(f.job);
    if (f.job == l.list_job) l.list_job = 0;
    if (f.job == l.use_job) l.use_job = 0;
    l.error = ctx.log_failure(f);
}

void LearningController::engine_died() {
    auto& l = s.learn;
    l.round_job = l.list_job = l.use_job = 0;
}

}  // namespace t5s::ui
