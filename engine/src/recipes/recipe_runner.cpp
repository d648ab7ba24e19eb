// Running an augmentation recipe (t5s/recipe_runner.h): the steps in order, each over all its
// inputs as one generate_scored call, then the pooled candidates judged against the source.
#include "t5s/recipe_runner.h"

#include <algorithm>
#include <map>

#include "quality/scored_rounds.h"
#include "spans/span_restore.h"
#include "t5s/error.h"
#include "t5s/seed.h"

namespace t5s {
namespace {

// One text on its way through the steps.
struct Leg {
    size_t source = 0;    // which text of the request
    std::string text;     // what the next step encodes (with the sentinels where spans are protected)
    Candidate candidate;  // as the last step decoded it (ids with the sentinels), its route the steps so far
};

// The legs of the request as a whole: the sources' span plans and whether any protects a span.
struct Sources {
    std::vector<InputRounds> inputs;  // per text: source and span plan
    bool protects = false;
};

Sources plan_sources(const std::vector<std::string>& texts, const std::vector<std::vector<Span>>& spans,
                     const GenerationOptions& o) {
    Sources s;
    s.inputs.resize(texts.size());
    for (size_t i = 0; i < texts.size(); ++i) {
        plan_input(&s.inputs[i], texts[i], spans.empty() ? std::vector<Span>{} : spans[i], o);
        s.protects = s.protects || s.inputs[i].plan.active();
    }
    return s;
}

// A step's settings as its leg runs: the source is masked once, so the leg detects no spans and keeps
// the sentinels it is given; a candidate step's outputs are judged later, against the source, so its
// leg filters and ranks nothing and leaves the model scores out.
GenerationOptions leg_options(const Recipe& r, size_t index, const GenerationOptions& request, bool protects) {
    GenerationOptions o = step_options(r.steps[index], index, request);
    o.protect.clear();
    o.protect_regex.clear();
    o.keep_sentinels = protects;
    if (r.is_candidate(r.steps[index].name)) {
        o.no_copy = o.distinct = o.model_scores = o.drop_invalid_text = false;
        o.rank = RankBy::None;
        o.min_similarity = o.max_similarity = o.min_change = o.max_change = o.min_back_score = o.near_duplicate = std::nullopt;
    }
    return o;
}

// The step's error with the recipe and step named; the code is kept (a memory error stays one).
[[noreturn]] void refuse_step(const Recipe& r, const RecipeStep& step, const std::string& what,
                              ErrorCode code = ErrorCode::InvalidArgument) {
    throw Error(code, "recipe " + r.file + ": step '" + step.name + "': " + what);
}

// Every step's settings valid and its fan-out bounded, before anything is generated.
void check_steps(const Recipe& r, const GenerationOptions& request, const Embedder* embedder) {
    for (size_t i = 0; i < r.steps.size(); ++i) {
        try {
            const GenerationOptions o = leg_options(r, i, request, false);
            validate_generation_options(o);
            require_scores_available(o, embedder);
        } catch (const Error& e) {
            refuse_step(r, r.steps[i], e.what(), e.code());
        }
        const int64_t n = r.fan_out(i, request);
        if (n > kMaxRecipeFanOut)
            refuse_step(r, r.steps[i],
                        "one source fans out to " + std::to_string(n) + " texts here (at most " +
                            std::to_string(kMaxRecipeFanOut) + "): fewer num_return_sequences");
    }
}

// The candidate's ids as text with its sentinels, for the next leg to encode.
std::string text_with_sentinels(const Tokenizer& tok, const std::vector<int>& ids) {
    std::vector<int> kept;
    for (int id : ids)
        if (id != tok.pad_id() && id != tok.eos_id() && id != tok.unk_id()) kept.push_back(id);
    return tok.decode(kept, /*skip_special_tokens=*/false);
}

// One step over all its inputs as one batched generation; every candidate of every input is a leg.
std::vector<Leg> run_step(const Recipe& r, size_t index, const std::vector<Leg>& inputs, const Model& model,
                          const Embedder* embedder, const GenerationOptions& o, const Sources& sources,
                          const RecipeRunners& runners) {
    const RecipeStep& step = r.steps[index];
    std::vector<std::string> texts;
    for (const Leg& leg : inputs) texts.push_back(leg.text);
    const Embedder* step_embedder = r.is_candidate(step.name) ? nullptr : embedder;
    std::vector<GenerationResult> results;
    try {
        results = runners.generate ? runners.generate(model, step_embedder, texts, o)
                                   : generate_scored(model, step_embedder, texts, {}, o, runners.control);
    } catch (const Error& e) {
        if (e.code() == ErrorCode::Cancelled) throw;
        refuse_step(r, step, e.what(), e.code());
    }
    const Tokenizer& tok = model.tokenizer();
    std::vector<Leg> out;
    for (size_t j = 0; j < inputs.size(); ++j) {
        const spans::SpanPlan& plan = sources.inputs[inputs[j].source].plan;
        for (Candidate& c : results.at(j).candidates) {
            const std::string shown = plan.active() ? spans::restore_spans(plan, c.ids, tok).text : c.text;
            std::string next = sources.protects ? text_with_sentinels(tok, c.ids) : c.text;
            c.route = inputs[j].candidate.route;
            c.route.push_back({step.name, shown});
            out.push_back({inputs[j].source, std::move(next), std::move(c)});
        }
    }
    return out;
}

// The candidate steps' legs decoded as candidates of their sources (spans restored), pooled per
// source in recipe order; each keeps its route.
using Pool = std::vector<std::vector<Candidate>>;

void add_to_pool(std::vector<Leg> legs, const Model& model, const GenerationOptions& o, const Sources& sources, Pool* pool) {
    for (Leg& leg : legs) {
        std::vector<Candidate> one{std::move(leg.candidate)};
        decode_round(model.tokenizer(), sources.inputs[leg.source], o, &one);  // text and spans; the route stays
        (*pool)[leg.source].push_back(std::move(one.front()));
    }
}

// The pooled candidates judged against each original source, scored in one round for all sources.
std::vector<GenerationResult> judge(Pool pool, Sources sources, const Model& judge_model, const Embedder* embedder,
                                    const GenerationOptions& options) {
    const size_t n = sources.inputs.size();
    std::vector<GenerationOptions> per_source(n, options);  // every candidate that passes is kept
    std::vector<RoundCandidates> round;
    round.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        per_source[i].num_return_sequences = std::max<int>(1, static_cast<int>(pool[i].size()));
        round.push_back({&sources.inputs[i], screen_round(&sources.inputs[i], pool[i], per_source[i]), &per_source[i]});
    }
    score_round(judge_model, embedder, &round, std::max(1, options.batch_size));
    const RankBy rank_key = effective_rank(options.rank, embedder != nullptr);
    std::vector<GenerationResult> out(n);
    for (size_t i = 0; i < n; ++i) {
        GenerationResult& r = out[i];
        r.input = sources.inputs[i].source;
        r.seed = options.seed;
        r.spans = source_spans(sources.inputs[i]);
        finish_result(std::move(sources.inputs[i]), per_source[i], rank_key, &r);
    }
    return out;
}

bool any_step_samples(const Recipe& r, const GenerationOptions& request) {
    for (size_t i = 0; i < r.steps.size(); ++i)
        if (step_options(r.steps[i], i, request).do_sample) return true;
    return false;
}

}  // namespace

std::vector<GenerationResult> run_recipe(const Recipe& recipe, const RecipeRunners& runners, const Model& judge_model,
                                         const Embedder* embedder, const std::vector<std::string>& texts,
                                         const std::vector<std::vector<Span>>& spans, const GenerationOptions& options) {
    if (!spans.empty() && spans.size() != texts.size())
        throw Error(ErrorCode::InvalidArgument, "generate: spans must be given for every text or for none");
    GenerationOptions request = options;
    request.seed =
        any_step_samples(recipe, options) ? resolve_seed(options.seed) : options.seed;  // one seed, every step's derived from it
    validate_generation_options(request);
    require_scores_available(request, embedder);
    check_steps(recipe, request, embedder);
    if (texts.empty()) return {};
    const Sources sources = plan_sources(texts, spans, request);
    std::map<std::string, std::vector<Leg>> outputs;  // per step name; the source's under "source"
    for (size_t i = 0; i < texts.size(); ++i) outputs[kRecipeSource].push_back({i, sources.inputs[i].plan.masked, {}});
    Pool pool(texts.size());
    for (size_t s = 0; s < recipe.steps.size(); ++s) {
        const RecipeStep& step = recipe.steps[s];
        const GenerationOptions o = leg_options(recipe, s, request, sources.protects);
        const Model& model = runners.model_for(step);
        std::vector<Leg> legs = run_step(recipe, s, outputs.at(step.from), model, embedder, o, sources, runners);
        if (recipe.is_candidate(step.name)) add_to_pool(legs, model, o, sources, &pool);
        outputs[step.name] = std::move(legs);
    }
    return judge(std::move(pool), sources, judge_model, embedder, request);
}

}  // namespace t5s
