// The engine thread scores what the app generates: with an embedding model loaded, workspace and
// batch candidates carry similarity (the cosine of the embedder's vectors, checked here against
// Embedder::embed directly), the thresholds filter them with reasons, and a threshold sent with
// UpdateSettings reaches a batch's next row batch; without one, the scores but similarity, and
// outputs as before. Tiny real checkpoints from tests/data.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <optional>

#include "engine_fixtures.h"
#include "t5s/candidate_scores.h"
#include "t5s/engine_thread.h"

using namespace t5s;

namespace {

const std::filesystem::path kData = T5S_TEST_DATA;

// The engine's events, read in order: each wait goes on from where the last one stopped.
struct Inbox : test::EventLog {
    using EventLog::EventLog;
    size_t read = 0;  // the events before this one were looked at by an earlier wait

    // The event of type T for `job`; the events passed on the way go to `seen`. A JobFailed for the
    // job fails the test, or is returned through `failure` when given.
    template <class T>
    std::optional<T> wait(JobId job, std::vector<Event>* seen = nullptr, std::optional<JobFailed>* failure = nullptr) {
        const size_t from = read;
        const auto at =
            find([&](const Event& e) { return test::of_job<JobFailed>(e, job) || test::of_job<T>(e, job); }, 120, from);
        if (!at) FAIL("timed out waiting for job " << job);
        if (seen) seen->insert(seen->end(), all.begin() + from, all.begin() + *at);
        read = *at + 1;
        if (auto* f = test::of_job<JobFailed>(all[*at], job)) {
            if (!failure) FAIL("job " << job << " failed: " << f->message);
            *failure = *f;
            return std::nullopt;
        }
        return std::get<T>(all[*at]);
    }
};

Generate beams(std::vector<std::string> texts) {
    Generate g;
    g.texts = std::move(texts);
    g.options.max_new_tokens = 8;
    g.options.num_beams = 4;
    g.options.num_return_sequences = 4;
    g.record_history = false;
    return g;
}

}  // namespace

TEST_CASE("engine thread: generations are scored with the loaded embedding model", "[engine_thread][model][scores]") {
    EngineConfig config = test::quiet_config();
    EngineThread engine(config);
    Inbox inbox{engine};
    inbox.wait<ModelLoaded>(engine.submit(LoadModel{test::tiny_model_dir(), test::one_cpu_thread()}));

    // No embedding model: every score but similarity; a similarity bound is refused with its name.
    const GenerationDone plain = *inbox.wait<GenerationDone>(engine.submit(beams({"hello world"})));
    REQUIRE(plain.results.size() == 1);
    REQUIRE(plain.results[0].candidates.size() == 4);
    for (const auto& c : plain.results[0].candidates) {
        CHECK_FALSE(c.scores.similarity);
        CHECK(c.scores.back_score);
        CHECK(c.scores.change);
        CHECK(c.scores.fluency);
    }
    CHECK(plain.results[0].diversity);
    Generate bounded = beams({"hello world"});
    bounded.options.min_similarity = 0.5;
    std::optional<JobFailed> refused;
    CHECK_FALSE(inbox.wait<GenerationDone>(engine.submit(bounded), nullptr, &refused));
    REQUIRE(refused);
    CHECK_THAT(refused->message, Catch::Contains("min_similarity"));

    // With one: similarity = the cosine of the embedder's own vectors for source and candidate.
    inbox.wait<EmbedderLoaded>(engine.submit(LoadEmbedder{kData / "embedder" / "xlmr_mean_norm", test::one_cpu_thread()}));
    const GenerationDone scored = *inbox.wait<GenerationDone>(engine.submit(beams({"hello world"})));
    const auto& cands = scored.results[0].candidates;
    REQUIRE(cands.size() == 4);
    const auto embedder = Embedder::load(kData / "embedder" / "xlmr_mean_norm", test::one_cpu_thread());
    const auto source = embedder->embed({"hello world"})[0];
    for (size_t k = 0; k < cands.size(); ++k) {
        REQUIRE(cands[k].scores.similarity);
        CHECK(*cands[k].scores.similarity == Approx(cosine_similarity(source, embedder->embed({cands[k].text})[0])).margin(1e-5));
        // Same decoding as without the embedder: same texts in the same (beam) order with rank none.
        CHECK(cands[k].text == plain.results[0].candidates[k].text);
    }

    // A bound between the candidates' similarities keeps those above it and drops the rest, with the reason.
    std::vector<double> sims;
    for (const auto& c : cands) sims.push_back(*c.scores.similarity);
    std::sort(sims.begin(), sims.end());
    REQUIRE(sims.front() < sims.back());
    const double split = (sims[1] + sims[2]) / 2.0;
    Generate filtered = beams({"hello world"});
    filtered.options.min_similarity = split;
    filtered.options.rank = RankBy::Similarity;
    const GenerationDone f = *inbox.wait<GenerationDone>(engine.submit(filtered));
    const auto& kept = f.results[0].candidates;
    REQUIRE_FALSE(kept.empty());
    REQUIRE_FALSE(f.results[0].dropped.empty());
    CHECK(kept.size() + f.results[0].dropped.size() == 4);
    for (size_t k = 0; k < kept.size(); ++k) {
        CHECK(*kept[k].scores.similarity >= split);
        if (k > 0) CHECK(*kept[k - 1].scores.similarity >= *kept[k].scores.similarity);  // ranked by similarity
    }
    for (const auto& d : f.results[0].dropped) {
        CHECK(*d.candidate.scores.similarity < split);
        CHECK(d.reason.kind == DropReason::SimilarityBelow);
        CHECK(d.reason.threshold == split);
    }

    // Batch rows are scored too; unloading the embedding model takes similarity away again.
    BatchAugment batch;
    batch.name = "scores";
    batch.rows = {"hello world", "good morning"};
    batch.options = beams({}).options;
    std::vector<Event> seen;
    inbox.wait<JobFinished>(engine.submit(batch), &seen);
    int rows = 0;
    for (const auto& e : seen)
        if (auto* r = std::get_if<BatchRowDone>(&e)) {
            ++rows;
            for (const auto& c : r->result.candidates) CHECK(c.scores.similarity);
        }
    CHECK(rows == 2);

    // A threshold moved while a batch waits (paused behind a generation) reaches its next rows.
    BatchAugment later = batch;
    later.name = "scores-hot-swap";
    later.options.batch_size = 1;
    const JobId blocker = engine.submit(beams({"hello world"}));
    const JobId job = engine.submit(later);
    engine.submit(PauseJob{job});
    inbox.wait<GenerationDone>(blocker);
    const JobPaused paused = *inbox.wait<JobPaused>(job);
    REQUIRE(paused.done < 2);
    GenerationOptions moved = later.options;
    moved.min_similarity = split;
    engine.submit(UpdateSettings{moved});
    engine.submit(ResumeJob{job});
    seen.clear();
    inbox.wait<JobFinished>(job, &seen);
    int filtered_rows = 0;
    for (const auto& e : seen)
        if (auto* r = std::get_if<BatchRowDone>(&e); r && r->job == job && r->row >= paused.done) {
            ++filtered_rows;
            for (const auto& c : r->result.candidates) CHECK(*c.scores.similarity >= split);
            for (const auto& d : r->result.dropped) CHECK(d.reason.kind == DropReason::SimilarityBelow);
        }
    CHECK(filtered_rows == 2 - paused.done);

    inbox.wait<EmbedderUnloaded>(engine.submit(UnloadEmbedder{}));
    const GenerationDone after = *inbox.wait<GenerationDone>(engine.submit(beams({"hello world"})));
    for (const auto& c : after.results[0].candidates) CHECK_FALSE(c.scores.similarity);
}
