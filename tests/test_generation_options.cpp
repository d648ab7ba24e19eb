// Settings validation (every bad combination gets a message naming the field), the hot-swap
// handle, and the candidate normalisation used by --distinct / --no-copy.
#include <catch2/catch.hpp>

#include <algorithm>
#include <thread>

#include "t5s/error.h"
#include "t5s/generation_options.h"
#include "text/text_normalize.h"

using namespace t5s;

namespace {
std::string message_for(GenerationOptions o) {
    try {
        validate_generation_options(o);
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::InvalidArgument);
        return e.what();
    }
    return "";
}
}  // namespace

TEST_CASE("defaults are valid and neutral", "[options]") {
    GenerationOptions o;
    CHECK(message_for(o).empty());
    CHECK(o.temperature == 1.0f);
    CHECK(o.top_p == 1.0f);
    CHECK(o.top_k == 0);
    CHECK(o.repetition_penalty == 1.0f);
    CHECK(o.num_beams == 1);
}

TEST_CASE("invalid settings are rejected with the field named", "[options][errors]") {
    GenerationOptions o;
    o.top_p = 0.0f;
    CHECK(message_for(o).find("top_p must be in (0, 1]") != std::string::npos);
    o = {};
    o.top_p = 1.5f;
    CHECK(message_for(o).find("top_p") != std::string::npos);
    o = {};
    o.do_sample = true;
    o.temperature = 0.0f;
    CHECK(message_for(o).find("temperature must be > 0") != std::string::npos);
    o = {};
    o.num_return_sequences = 3;
    o.num_beams = 2;
    CHECK(message_for(o).find("num_return_sequences (3) must be <= num_beams (2)") != std::string::npos);
    o.do_sample = true;
    o.num_beams = 1;
    CHECK(message_for(o).empty());  // sampling may return more candidates than beams
    o = {};
    o.max_new_tokens = 0;
    CHECK(message_for(o).find("max_new_tokens") != std::string::npos);
    o = {};
    o.min_new_tokens = 10;
    o.max_new_tokens = 5;
    CHECK(message_for(o).find("min_new_tokens must be <= max_new_tokens") != std::string::npos);
    o = {};
    o.repetition_penalty = 0.0f;
    CHECK(message_for(o).find("repetition_penalty") != std::string::npos);
    o = {};
    o.top_k = -1;
    CHECK(message_for(o).find("top_k") != std::string::npos);
    o = {};
    o.batch_size = 0;
    CHECK(message_for(o).find("batch_size") != std::string::npos);
}

TEST_CASE("SettingsHandle hands the latest settings to another thread", "[options]") {
    SettingsHandle h;
    const uint64_t v0 = h.version();
    std::thread writer([&] {
        GenerationOptions o;
        o.temperature = 0.5f;
        h.set(o);
    });
    writer.join();
    CHECK(h.version() == v0 + 1);
    CHECK(h.get().temperature == 0.5f);
}

TEST_CASE("candidate normalisation folds width and whitespace", "[options]") {
    CHECK(normalize_for_compare("  Hello   world \n") == "Hello world");
    CHECK(normalize_for_compare("ＡＢＣ　１２３！") == "ABC 123!");
    CHECK(normalize_for_compare("猫が好き") == "猫が好き");
    CHECK(normalize_for_compare("a\tb") == normalize_for_compare("a b"));
}

TEST_CASE("sampling controls imply sampling unless beams or do_sample are named", "[options]") {
    auto implied = [](std::vector<std::string> named, int beams = 1, bool do_sample = false) {
        GenerationOptions o;
        o.num_beams = beams;
        o.do_sample = do_sample;
        o.num_return_sequences = 3;
        const size_t named_before = named.size();
        const bool changed = imply_sampling(&o, &named);
        CHECK(changed == (o.do_sample && !do_sample));
        CHECK(named.size() == named_before + (changed ? 1 : 0));  // "do_sample" named when it changed
        if (changed) CHECK(named.back() == "do_sample");
        return o;
    };
    // The seed service's request: {"num_return_sequences": 3, "temperature": 0.85, "top_p": 0.92}.
    GenerationOptions seed = implied({"num_return_sequences", "temperature", "top_p"});
    CHECK(seed.do_sample);
    CHECK(message_for(seed).empty());
    CHECK(implied({"top_k"}).do_sample);
    CHECK_FALSE(implied({"num_return_sequences"}).do_sample);          // nothing says sample
    CHECK_FALSE(implied({"temperature", "do_sample"}).do_sample);      // do_sample: false said so
    CHECK_FALSE(implied({"temperature", "num_beams"}).do_sample);      // beams named: beam search
    CHECK_FALSE(implied({"temperature"}, /*beams=*/4).do_sample);      // defaults ask for beams
    CHECK(implied({"temperature"}, 1, /*do_sample=*/true).do_sample);  // already sampling: unchanged
}

TEST_CASE("penalty_alpha without top_k gets transformers' top_k 50; the rows per input follow the method", "[options]") {
    GenerationOptions o;
    o.penalty_alpha = 0.6f;
    std::vector<std::string> named{"penalty_alpha"};
    CHECK_FALSE(is_contrastive_search(o));  // top_k 0: it would decode greedily, penalty_alpha unused
    CHECK(imply_contrastive_top_k(&o, &named));
    CHECK(o.top_k == 50);
    CHECK(named.back() == "top_k");
    CHECK(is_contrastive_search(o));
    CHECK(decoding_rows_per_input(o) == 50);
    // A named top_k, sampling, beams or forced words keep their own meaning.
    GenerationOptions k;
    k.penalty_alpha = 0.6f;
    k.top_k = 4;
    std::vector<std::string> with_k{"penalty_alpha", "top_k"};
    CHECK_FALSE(imply_contrastive_top_k(&k, &with_k));
    CHECK(decoding_rows_per_input(k) == 4);
    GenerationOptions beams;
    beams.penalty_alpha = 0.6f;
    beams.num_beams = 3;
    std::vector<std::string> beam_named{"penalty_alpha", "num_beams"};
    CHECK_FALSE(imply_contrastive_top_k(&beams, &beam_named));
    CHECK(beams.top_k == 0);
    CHECK(decoding_rows_per_input(beams) == 3);
    GenerationOptions sampled;
    sampled.do_sample = true;
    sampled.num_return_sequences = 5;
    CHECK(decoding_rows_per_input(sampled) == 5);
    CHECK(decoding_rows_per_input(GenerationOptions{}) == 1);
}
