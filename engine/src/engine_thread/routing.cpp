// EngineThread::submit: which lane and job kind each command takes (one table, below), and the
// commands that act at once on jobs already in the registry (Cancel, PauseJob, ResumeJob,
// UpdateSettings).
#include "engine_thread/engine_impl.h"

namespace t5s::detail {

namespace {

struct Route {
    JobKind kind;
    LaneId lane;
};

// The routing table: one line per command that becomes a job.
// clang-format off
Route route(const LoadModel&) { return {JobKind::LoadModel, LaneId::Model}; }
Route route(const UnloadModel&) { return {JobKind::UnloadModel, LaneId::Model}; }
Route route(const LoadEmbedder&) { return {JobKind::LoadModel, LaneId::Model}; }
Route route(const UnloadEmbedder&) { return {JobKind::UnloadModel, LaneId::Model}; }
Route route(const SetAdapter&) { return {JobKind::LoadModel, LaneId::Model}; }
Route route(const Generate&) { return {JobKind::Generate, LaneId::Model}; }
Route route(const BatchAugment&) { return {JobKind::Batch, LaneId::Model}; }
Route route(const StartTraining&) { return {JobKind::Train, LaneId::Model}; }
Route route(const LoadDataset&) { return {JobKind::Io, LaneId::Io}; }
Route route(const QueryHistory&) { return {JobKind::Io, LaneId::Io}; }
Route route(const RecordDecision&) { return {JobKind::Io, LaneId::Io}; }
Route route(const DeleteHistory&) { return {JobKind::Io, LaneId::Io}; }
Route route(const ExportHistory&) { return {JobKind::Io, LaneId::Io}; }
Route route(const ListDirectory&) { return {JobKind::Io, LaneId::Io}; }
Route route(const WriteTextFile&) { return {JobKind::Io, LaneId::Io}; }
Route route(const QueryTrainingRuns&) { return {JobKind::Io, LaneId::Io}; }
Route route(const DeleteTrainingRun&) { return {JobKind::Io, LaneId::Io}; }
Route route(const PullModel&) { return {JobKind::Io, LaneId::Download}; }
Route route(const ListModels&) { return {JobKind::Io, LaneId::Io}; }
Route route(const DeleteModel&) { return {JobKind::Io, LaneId::Io}; }
Route route(const LearnNow&) { return {JobKind::Learn, LaneId::Download}; }  // never on the model lane
Route route(const ListAdapterVersions&) { return {JobKind::Io, LaneId::Io}; }
Route route(const UseAdapterVersion&) { return {JobKind::LoadModel, LaneId::Model}; }
// Commands that act at once never reach a lane (act_now answers them first).
Route route(const Cancel&) { return {JobKind::Io, LaneId::Io}; }
Route route(const PauseJob&) { return {JobKind::Io, LaneId::Io}; }
Route route(const ResumeJob&) { return {JobKind::Io, LaneId::Io}; }
Route route(const UpdateSettings&) { return {JobKind::Io, LaneId::Io}; }
// clang-format on

// Visitor for the commands that act at once; every other command answers "not mine".
struct ActNow {
    EngineImpl& engine;

    std::optional<JobId> operator()(const Cancel& c) const {
        const JobId id = engine.jobs.reserve_id();
        engine.jobs.cancel(c.job);  // queued: the lane skips it; running: stops at its next step
        if (auto task = engine.unpark(c.job)) {
            // A paused batch is on no lane: it ends here.
            engine.fail(*task->job, ErrorCode::Cancelled, "cancelled while paused");
            engine.jobs.remove(c.job);
        }
        return id;
    }
    std::optional<JobId> operator()(const PauseJob& p) const {
        const JobId id = engine.jobs.reserve_id();
        auto job = engine.jobs.find(p.job);
        if (!job || !job->pausable()) {
            engine.fail(id, ErrorCode::InvalidArgument, "no batch job " + std::to_string(p.job) + " to pause");
            return id;
        }
        job->pause();  // batch: stops after its current row batch; trainer: waits at its next micro-batch
        if (job->kind() == JobKind::Train) engine.emit(JobPaused{p.job, job->done(), job->total()});
        return id;
    }
    std::optional<JobId> operator()(const ResumeJob& r) const {
        const JobId id = engine.jobs.reserve_id();
        auto job = engine.jobs.find(r.job);
        if (!job || !job->pausable()) {
            engine.fail(id, ErrorCode::InvalidArgument, "no paused batch job " + std::to_string(r.job));
            return id;
        }
        job->resume();
        if (auto task = engine.unpark(r.job)) {  // a batch that reached its pause goes back on its lane
            job->set_state(JobState::Queued);
            engine.enqueue(engine.model_lane, std::move(*task));
        }
        return id;
    }
    std::optional<JobId> operator()(const UpdateSettings& u) const {
        const JobId id = engine.jobs.reserve_id();
        try {
            validate_generation_options(u.options);
        } catch (const Error& e) {
            engine.fail(id, e.code(), e.what());
            return id;
        }
        const int n =
            engine.jobs.update_settings([&](const GenerationOptions& current) { return merge_live(current, u.options); });
        engine.emit(SettingsUpdated{id, n});
        return id;
    }
    template <class Other>
    std::optional<JobId> operator()(const Other&) const {
        return std::nullopt;
    }
};

}  // namespace

JobId EngineImpl::submit(Command command) {
    if (auto id = act_now(command)) return *id;
    return enqueue_job(std::move(command));
}

std::optional<JobId> EngineImpl::act_now(const Command& command) { return std::visit(ActNow{*this}, command); }

JobId EngineImpl::enqueue_job(Command command) {
    const Route r = std::visit([](const auto& c) { return route(c); }, command);
    LaneTask task{jobs.create(r.kind), std::move(command), Clock::now(), nullptr, nullptr};
    Job& job = *task.job;
    if (const auto* b = std::get_if<BatchAugment>(&task.command)) {
        // Settings live from submit on: UpdateSettings reaches a queued or paused batch too. Not a
        // recipe's: a step's own settings would be overwritten mid-step by the base ones.
        if (!b->recipe) job.attach_settings(std::make_shared<SettingsHandle>(b->options));
        task.batch = std::make_shared<BatchRun>();
        task.batch->done = b->done;
        task.batch->done.resize(b->rows.size(), false);
        job.set_progress(0, int64_t(b->rows.size()));
    }
    if (const auto* t = std::get_if<StartTraining>(&task.command)) {
        // Made now so that PauseJob works before the run starts (it then waits before step 1).
        auto trainer = std::make_shared<TrainingJob>(t->options);
        job.on_signal([trainer](JobSignal s) {
            if (s == JobSignal::Pause) trainer->pause();
            if (s == JobSignal::Resume) trainer->resume();
            if (s == JobSignal::Cancel) {
                trainer->stop();    // saves a checkpoint, then Finished(stopped)
                trainer->resume();  // a paused trainer must wake up to stop
            }
        });
        task.trainer = std::move(trainer);
    }
    const JobId id = job.id();
    enqueue(lane(r.lane), std::move(task));
    return id;
}

}  // namespace t5s::detail
