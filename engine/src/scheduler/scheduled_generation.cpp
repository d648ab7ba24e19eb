// generate_scored (t5s/candidate_scores.h): the texts go to a scheduler of their own as one request,
// so the desktop, the batch panel and `t5studio generate` decode, score, filter, rank and stream
// through the code `t5studio serve` runs — one generation path. The caller's GenerationControl
// maps onto the request: cancel flag, per-step settings, step reports.
#include <algorithm>
#include <future>

#include "decode/batch_decoder.h"
#include "quality/scored_rounds.h"
#include "t5s/candidate_scores.h"
#include "t5s/error.h"
#include "t5s/scheduler.h"

namespace t5s {
namespace {

// The rows one step may hold: batch_size inputs with all their candidates or beams, as the batch
// of a lone `generate` always was (batch_size bounds its memory).
SchedulerLimits limits_for(const GenerationOptions& options) {
    SchedulerLimits limits;
    limits.max_batch = std::max(1, options.batch_size) * decode::BatchDecoder::rows_for(options);
    limits.max_queue = 1;
    return limits;
}

ServeRequest request_for(const std::vector<std::string>& texts, const std::vector<std::vector<Span>>& spans,
                         const GenerationOptions& options, GenerationControl* control) {
    ServeRequest request;
    request.texts = texts;
    request.options = options;  // also the scheduler's defaults: nothing needs naming
    request.spans = spans;
    if (control) {
        request.live = control->live_settings;
        request.cancel = &control->cancel;
    }
    return request;
}

}  // namespace

std::vector<GenerationResult> generate_scored(const Model& model, const Embedder* embedder, const std::vector<std::string>& texts,
                                              const GenerationOptions& options, GenerationControl* control) {
    return generate_scored(model, embedder, texts, {}, options, control);
}

std::vector<GenerationResult> generate_scored(const Model& model, const Embedder* embedder, const std::vector<std::string>& texts,
                                              const std::vector<std::vector<Span>>& spans, const GenerationOptions& options,
                                              GenerationControl* control) {
    validate_generation_options(options);
    require_scores_available(options, embedder);
    if (!spans.empty() && spans.size() != texts.size())
        throw Error(ErrorCode::InvalidArgument, "generate: spans must be given for every text or for none");
    if (texts.empty()) return {};
    const std::shared_ptr<const void> adapter = model.pin_adapter();  // a swap waits for this generation
    std::promise<RequestOutcome> done;
    std::future<RequestOutcome> outcome = done.get_future();
    Scheduler scheduler(model, limits_for(options), std::make_shared<SettingsHandle>(options), embedder, SchedulerThread::Caller);
    RequestEvents events;
    if (control && control->on_step) events.on_step = control->on_step;
    events.on_done = [&done](const RequestOutcome& o) { done.set_value(o); };
    if (!scheduler.submit(request_for(texts, spans, options, control), std::move(events)))
        throw Error(ErrorCode::Internal, "generate: the scheduler refused the request");
    scheduler.run_until_idle();  // on this thread: on_done has run when it returns
    RequestOutcome result = outcome.get();
    if (result.error && result.error->code == ErrorCode::Cancelled) throw Error(ErrorCode::Cancelled, "generation cancelled");
    if (result.error) throw Error(result.error->code, result.error->message);
    return std::move(result.results);
}

}  // namespace t5s
