// The learning loop's jobs (t5s/learning.h): LearnNow on the download lane (never the model lane,
// so generation does not wait behind a round), ListAdapterVersions on the io lane, and
// UseAdapterVersion on the model lane (restore + the loaded model's adapter switch, no reload).
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "engine_thread/engine_impl.h"

namespace t5s::detail {

namespace {

// A manifest number of the wanted type, else `fallback` (a hand-edited manifest never fails a listing).
template <class T>
T number_or(const nlohmann::json& j, const char* key, T fallback) {
    const auto it = j.find(key);
    return it != j.end() && it->is_number() ? it->get<T>() : fallback;
}

AdapterVersionEntry entry_of(const AdapterVersion& v) {
    AdapterVersionEntry e;
    e.version = v.version;
    e.dir = v.dir;
    e.current = v.current;
    const auto j = nlohmann::json::parse(v.manifest_json, nullptr, false);
    if (!j.is_object()) return e;
    e.round = number_or(j, "round", int64_t{0});
    e.pairs_total = number_or(j, "pairs_total", int64_t{0});
    e.pairs_new = number_or(j, "pairs_new", int64_t{0});
    e.pairs_heldout = number_or(j, "pairs_heldout", int64_t{0});
    e.steps = number_or(j, "steps", int64_t{0});
    e.loss_before = number_or(j, "loss_before", -1.0);
    e.loss_after = number_or(j, "loss_after", -1.0);
    e.elapsed_s = number_or(j, "elapsed_s", 0.0);
    if (const auto c = j.find("created_at"); c != j.end() && c->is_string()) e.created_at = c->get<std::string>();
    if (const auto c = j.find("train_losses"); c != j.end() && c->is_array())  // since the curve was recorded
        for (const auto& x : *c)
            if (x.is_number()) e.train_losses.push_back(x.get<double>());
    if (const auto s = j.find("settings"); s != j.end() && s->is_object()) {
        e.lr = number_or(*s, "lr", -1.0);
        e.lora_r = number_or(*s, "lora_r", int64_t{0});
    }
    return e;
}

// A round is background work: the lane thread that runs it (and threads it starts afterwards, which
// inherit its nice value) yields the CPU to generation. Linux nice is per thread; an unprivileged
// process cannot lower it again, so the download lane stays at this level (downloads wait on the
// network, not the CPU). Best effort: a failure leaves the priority as it was.
void lower_this_thread_priority() {
    constexpr int kNice = 10;
    const auto tid = static_cast<id_t>(::syscall(SYS_gettid));
    if (::getpriority(PRIO_PROCESS, tid) < kNice) ::setpriority(PRIO_PROCESS, tid, kNice);
}

int64_t count_rejected(const std::filesystem::path& adapter_dir) {
    int64_t n = 0;
    std::error_code ec;
    for (std::filesystem::directory_iterator it(adapter_dir / "rejected", ec), end; !ec && it != end; it.increment(ec))
        if (it->path().extension() == ".json") ++n;
    return n;
}

}  // namespace

AdapterVersionsListed EngineImpl::versions_listed(JobId id, const std::filesystem::path& adapter_dir) {
    AdapterVersionsListed out;
    out.job = id;
    out.adapter_dir = adapter_dir;
    out.current = current_adapter_version(adapter_dir.string());
    for (const auto& v : list_adapter_versions(adapter_dir.string())) out.versions.push_back(entry_of(v));
    out.rejected_rounds = count_rejected(adapter_dir);
    return out;
}

bool EngineImpl::run_learn_job(LaneTask& task) {
    Job& job = *task.job;
    const JobId id = job.id();
    if (const auto* c = std::get_if<ListAdapterVersions>(&task.command)) {
        emit(versions_listed(id, c->adapter_dir));
        return true;
    }
    const auto* c = std::get_if<LearnNow>(&task.command);
    if (!c) return false;
    emit(JobStarted{id, "learn"});
    lower_this_thread_priority();
    if (config.history_db.empty()) throw Error(ErrorCode::InvalidArgument, "learning: the app has no history to learn from");
    LearningOptions o{c->round};
    o.model_dir = c->model_dir.string();
    o.history_path = config.history_db.string();
    o.adapter_dir = c->adapter_dir.string();
    o.source_prefix = c->task_prefix;
    LearningRoundDone done;
    done.job = id;
    auto last = Clock::now() - std::chrono::seconds(1);
    done.result = run_learning_round(
        o,
        [&](const TrainingEvent& e) {
            if (e.kind == TrainingEvent::Kind::Step) {
                done.train_losses.push_back(e.loss);
                job.set_progress(e.step, e.total_steps);
                const auto now = Clock::now();
                if (now - last < std::chrono::milliseconds(100) && e.step < e.total_steps) return;
                last = now;
            }
            emit(TrainingUpdate{id, e});
        },
        &job.generation().cancel);
    const bool adopted = done.result.status == "adopted";
    const std::string adapter = done.result.adapter;
    emit(std::move(done));
    // The switch goes through the model lane like any SetAdapter: a running Generate finishes first.
    if (adopted && c->use_adopted) enqueue_job(SetAdapter{adapter});
    emit(versions_listed(id, c->adapter_dir));
    return true;
}

void EngineImpl::use_adapter_version(Job& job, const UseAdapterVersion& cmd) {
    emit(JobStarted{job.id(), "adapter"});
    if (!model) throw Error(ErrorCode::InvalidArgument, "no model loaded: open a model folder first");
    const std::string dir = adapter_version_dir(cmd.adapter_dir.string(), cmd.version);
    if (cmd.version > 0 && adapter_version_of_dir(dir) != cmd.version)
        throw Error(ErrorCode::InvalidArgument, cmd.adapter_dir.string() + ": no adapter version " + std::to_string(cmd.version));
    model->set_adapter(dir);  // first: a bad folder leaves both the model and current.json as they were
    restore_adapter_version(cmd.adapter_dir.string(), cmd.version);
    emit(AdapterSet{job.id(), dir, model->info().adapter_parameter_count});
    emit(versions_listed(job.id(), cmd.adapter_dir));
}

}  // namespace t5s::detail
