// A stand-in Model for UI development and UI/engine-thread tests: no weights, no torch work.
// Candidate k of an input is the input with code points swapped/changed deterministically (seeded),
// produced one "token" (code point) per step so on_step, cancel and live_settings behave like a
// decoder. Each candidate's ids record the temperature read at each step * 100, which lets tests
// see a hot-swapped setting take effect mid-request.
#include <chrono>
#include <random>
#include <thread>

#include "fake_model.h"

#include "t5s/error.h"
#include "t5s/text_offsets.h"

namespace t5s {
namespace {

// The input's code points, one "token" each (t5s/text_offsets.h splits them).
std::vector<std::string> code_point_tokens(const std::string& s) {
    const std::vector<std::string_view> pieces = split_code_points(s);
    return std::vector<std::string>(pieces.begin(), pieces.end());
}

class FakeModel final : public Model {
public:
    FakeModel(const std::filesystem::path& dir, const RuntimeOptions& options, int delay_ms) : delay_ms_(delay_ms) {
        info_.dir = dir;
        info_.model_type = "fake";
        info_.variant = "stand-in model for UI tests (no weights)";
        info_.stored_dtype = "-";
        info_.precision = to_string(options.precision);
        info_.device = "cpu";
        info_.threads = 1;
        info_.parameter_count = 0;
        info_.weight_bytes = 0;
    }
    const ModelInfo& info() const override { return info_; }
    bool has_tokenizer() const override { return false; }
    const Tokenizer& tokenizer() const override { throw Error(ErrorCode::Unsupported, "fake model has no tokenizer"); }
    FloatArray encoder_hidden(const IdBatch&) const override { throw unsupported(); }
    FloatArray logits(const IdBatch&, const IdBatch&) const override { throw unsupported(); }
    ScoreResult score(const IdBatch&, const IdBatch&) const override { throw unsupported(); }
    std::vector<std::vector<Candidate>> generate_ids(const IdBatch&, const GenerationOptions&,
                                                     GenerationControl*) const override {
        throw unsupported();
    }

    std::vector<GenerationResult> generate(const std::vector<std::string>& texts, const GenerationOptions& options,
                                           GenerationControl* control) const override {
        validate_generation_options(options);
        std::vector<GenerationResult> out;
        const int n = std::max(options.num_return_sequences, 1);
        for (const auto& text : texts) {
            GenerationResult r;
            r.input = text;
            // Drop a T5 task prefix ("paraphrase: ") the way a trained model would not echo it.
            std::string body = text;
            if (auto colon = body.find(": "); colon != std::string::npos && colon < 40 && body.find_first_of(" \t") >= colon)
                body = body.substr(colon + 2);
            auto cps = code_point_tokens(body);
            const size_t steps = std::min<size_t>(cps.size(), size_t(std::max(options.max_new_tokens, 1)));
            std::vector<std::vector<std::string>> cands(size_t(n), cps);
            std::vector<std::vector<int>> ids(static_cast<size_t>(n), std::vector<int>{});
            std::mt19937_64 rng(uint64_t(options.seed < 0 ? 7 : options.seed) + std::hash<std::string>{}(text));
            for (int k = 0; k < n; ++k) {
                auto& c = cands[size_t(k)];
                if (c.size() >= 2) {
                    const size_t i = (size_t(k) * 3 + rng() % 5) % (c.size() - 1);
                    std::swap(c[i], c[i + 1]);
                    if (k % 2 == 1) c.erase(c.begin() + long(rng() % c.size()));
                }
            }
            for (size_t s = 0; s < steps; ++s) {
                if (control && control->cancel) throw Error(ErrorCode::Cancelled, "generation cancelled");
                GenerationOptions live = control && control->live_settings ? control->live_settings->get() : options;
                for (auto& v : ids) v.push_back(int(live.temperature * 100.0f + 0.5f));
                if (delay_ms_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms_));
                if (control && control->on_step) control->on_step(StepInfo{int(s) + 1, n, n});
            }
            for (int k = 0; k < n; ++k) {
                std::string t;
                for (auto& p : cands[size_t(k)]) t += p;
                if (options.no_copy && t == body) continue;
                r.candidates.push_back(Candidate{t, ids[size_t(k)], -0.25 * (k + 1) * double(steps) / 10.0});
            }
            out.push_back(std::move(r));
        }
        return out;
    }

private:
    static Error unsupported() { return Error(ErrorCode::Unsupported, "fake model: generate() only"); }
    ModelInfo info_;
    int delay_ms_;
};

}  // namespace

std::unique_ptr<Model> make_fake_model(const std::filesystem::path& dir, const RuntimeOptions& options, int step_delay_ms) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) throw Error(ErrorCode::FileNotFound, dir.string() + ": not a directory");
    return std::make_unique<FakeModel>(dir, options, step_delay_ms);
}

}  // namespace t5s
