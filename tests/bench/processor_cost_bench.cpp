// Per-step cost of each logits processor, warper and stopping criterion (tests/bench/README.md):
// microseconds per decoding step on random scores of batch 8 x the t5-small vocabulary (32128),
// decoder sequences of 20 tokens, one thread unless T5S_THREADS says otherwise. Each figure is the
// best of 5 runs of the mean over many steps, less the cost of the scores' copy every step makes.
//
//   build/tests/t5s_processor_cost_bench [tests/data/t5-spiece/spiece.model]
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "decode/logits_processors.h"
#include "decode/stop_strings.h"
#include "decode/token_processors.h"
#include "t5s/tokenizer.h"

using namespace t5s;

namespace {
constexpr int64_t kRows = 8, kVocab = 32128, kLength = 20;

// Mean microseconds of `step` (which gets a fresh copy of the scores), best of 5 runs.
double micros(const at::Tensor& scores, const std::function<void(at::Tensor&)>& step) {
    double best = 1e30;
    for (int run = 0; run < 5; ++run) {
        int n = 0;
        const auto start = std::chrono::steady_clock::now();
        double elapsed = 0.0;
        while (n < 20 || elapsed < 0.1) {
            at::Tensor s = scores.clone();
            step(s);
            ++n;
            elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        }
        best = std::min(best, elapsed * 1e6 / n);
    }
    return best;
}
}  // namespace

int main(int argc, char** argv) {
    const std::string spiece = argc > 1 ? argv[1] : "tests/data/t5-spiece/spiece.model";
    at::set_num_threads(std::getenv("T5S_THREADS") ? std::atoi(std::getenv("T5S_THREADS")) : 1);
    at::manual_seed(0);
    const at::Tensor scores = at::randn({kRows, kVocab}) * 3.0;
    const at::Tensor sequences = at::randint(3, 32000, {kRows, kLength}, at::kLong);
    std::vector<std::vector<int>> source_ids(kRows);
    for (auto& s : source_ids)
        for (int i = 0; i < 30; ++i) s.push_back(3 + (i * 7919) % 32000);
    RowSources sources;
    for (const auto& s : source_ids) sources.push_back(&s);
    const double copy = micros(scores, [](at::Tensor&) {});

    GenerationOptions o;
    o.max_new_tokens = kLength;  // forced_eos fires at this length: its worst case
    const SequenceBias bias = {{{5}, -2.0f}, {{12, 7}, 1.5f}, {{100, 200, 300}, -1.0f}, {{31999}, 0.5f}};
    const TokenIdLists bad = {{5}, {12, 7}, {100, 200, 300}};
    struct Row {
        const char* name;
        std::function<void(at::Tensor&)> step;
    };
    const std::vector<Row> rows = {
        {"repetition_penalty 1.2", [&](at::Tensor& s) { apply_repetition_penalty(s, sequences, 1.2f); }},
        {"no_repeat_ngram_size 3", [&](at::Tensor& s) { apply_no_repeat_ngram(s, sequences, 3); }},
        {"encoder_repetition_penalty 1.2", [&](at::Tensor& s) { apply_encoder_repetition_penalty(s, sources, 1.2f); }},
        {"encoder_no_repeat_ngram_size 2", [&](at::Tensor& s) { apply_encoder_no_repeat_ngram(s, sequences, sources, 2); }},
        {"bad_words_ids (3 sequences)", [&](at::Tensor& s) { apply_bad_words(s, sequences, bad, 1); }},
        {"min_new_tokens", [&](at::Tensor& s) { apply_min_new_tokens(s, 0, 5, 1); }},
        {"sequence_bias (4 sequences)", [&](at::Tensor& s) { apply_sequence_bias(s, sequences, bias); }},
        {"suppress_tokens (3 ids)",
         [&](at::Tensor& s) {
             apply_suppress_tokens(s, {5, 6, 7});
         }},
        {"begin_suppress_tokens (first step)",
         [&](at::Tensor& s) {
             apply_begin_suppress_tokens(s, 1, 1, {5, 6, 7});
         }},
        {"begin_suppress_tokens (later steps)",
         [&](at::Tensor& s) {
             apply_begin_suppress_tokens(s, kLength, 1, {5, 6, 7});
         }},
        {"forced_bos_token_id (first step)", [&](at::Tensor& s) { apply_forced_bos(s, 1, 5); }},
        {"forced_eos_token_id (last step)", [&](at::Tensor& s) { apply_forced_eos(s, kLength, kLength + 1, {1}); }},
        {"exponential_decay_length_penalty",
         [&](at::Tensor& s) {
             apply_length_decay(s, kLength, LengthDecay{2, 1.05f}, 1);
         }},
        {"renormalize_logits", [&](at::Tensor& s) { apply_renormalize(s, true); }},
        {"temperature 0.7", [&](at::Tensor& s) { apply_temperature(s, 0.7f); }},
        {"top_k 50", [&](at::Tensor& s) { apply_top_k(s, 50); }},
        {"top_p 0.9", [&](at::Tensor& s) { apply_top_p(s, 0.9f); }},
        {"min_p 0.05", [&](at::Tensor& s) { apply_min_p(s, 0.05f); }},
        {"typical_p 0.9", [&](at::Tensor& s) { apply_typical_p(s, 0.9f); }},
        {"epsilon_cutoff 3e-4", [&](at::Tensor& s) { apply_epsilon_cutoff(s, 3e-4f); }},
        {"eta_cutoff 3e-4", [&](at::Tensor& s) { apply_eta_cutoff(s, 3e-4f); }},
        {"process_logits, none set", [&](at::Tensor& s) { process_logits(s, sequences, GenerationOptions(), 1, false); }},
    };
    std::printf(
        "processor cost per step, batch %lld x vocab %lld, sequences of %lld, %d thread(s); copy of the scores %.1f us "
        "(subtracted)\n",
        static_cast<long long>(kRows), static_cast<long long>(kVocab), static_cast<long long>(kLength), at::get_num_threads(),
        copy);
    for (const Row& r : rows) std::printf("  %-38s %9.1f us\n", r.name, micros(scores, r.step) - copy);

    // Stop strings: the tokenizer's token texts once per decoder, then a check of every row per step.
    const Tokenizer tokenizer = Tokenizer::load(spiece);
    const auto t0 = std::chrono::steady_clock::now();
    auto texts = std::make_shared<const TokenTexts>(stop_string_token_texts(tokenizer));
    const double texts_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const auto t1 = std::chrono::steady_clock::now();
    StopCriteria stop{std::make_shared<const StopStrings>(texts, std::vector<std::string>{"\n", ".", "END OF TEXT", "###"}),
                      std::nullopt};
    const double build_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count();
    const at::Tensor host = sequences.contiguous();
    const double check = micros(scores, [&](at::Tensor&) { stop.rows_ending(host.data_ptr<int64_t>(), kRows, kLength); }) - copy;
    std::printf("  %-38s %9.1f us\n", "stop_strings (4 strings), per step", check);
    std::printf(
        "  stop_strings setup: token texts of %zu tokens %.1f ms (once per decoder), strings %.1f ms (once per request)\n",
        texts->size(), texts_ms, build_ms);
    StopCriteria timed{nullptr, std::chrono::steady_clock::now() + std::chrono::hours(1)};
    std::printf("  %-38s %9.3f us\n", "max_time, per step", micros(scores, [&](at::Tensor&) { (void)timed.time_up(); }) - copy);
    return 0;
}
