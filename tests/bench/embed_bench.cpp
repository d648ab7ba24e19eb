// Embedder cost next to generation (tests/bench/README.md, "Scoring with an embedder"): for each
// round, sample N candidates for each input with the T5 model, then embed every source and
// candidate and take the cosine of each pair (what the similarity score costs). Both timed with
// the same threads, alternating, in one process. Prints one JSON line.
//
//   t5s_embed_bench --model DIR --embedder DIR [--inputs 8] [--batch 4] [--num-return 8]
//                   [--new-tokens 32] [--rounds 5] [--threads 2] [--dtype fp32|bf16|int8]
//                   [--embedder-dtype fp32|bf16|int8]   (default: --dtype)
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "t5s/embedder.h"
#include "t5s/model.h"

namespace {

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

const std::vector<std::string> kSources = {
    "The weather is lovely today, so we are going for a long walk in the park.",
    "Could you tell me where the nearest train station is?",
    "レンガの建物の前を、乳母車を押した女性が歩いています。",
    "我们今天去公园散步吧。",
    "She has been learning to play the piano for three years.",
    "山の上に顔の白い牛が2頭います。",
    "The meeting was postponed because the manager was ill.",
    "他每天早上六点起床。",
};

}  // namespace

int main(int argc, char** argv) {
    std::map<std::string, std::string> a = {{"inputs", "8"}, {"batch", "4"},   {"num-return", "8"}, {"new-tokens", "32"},
                                            {"rounds", "5"}, {"threads", "2"}, {"dtype", "fp32"}};
    for (int i = 1; i + 1 < argc; i += 2) a[std::string(argv[i]).substr(2)] = argv[i + 1];
    if (!a.count("model") || !a.count("embedder")) {
        std::cerr << "usage: t5s_embed_bench --model DIR --embedder DIR [--inputs N] [--rounds R] [--threads T]\n";
        return 2;
    }
    t5s::RuntimeOptions rt;
    rt.device = t5s::Device::Cpu;
    rt.precision = t5s::parse_enum<t5s::Precision>(a["dtype"]);
    rt.threads = std::stoi(a["threads"]);
    auto model = t5s::Model::load(a["model"], rt);
    t5s::RuntimeOptions ert = rt;
    ert.precision = t5s::parse_enum<t5s::Precision>(a.count("embedder-dtype") ? a["embedder-dtype"] : a["dtype"]);
    auto embedder = t5s::Embedder::load(a["embedder"], ert);

    std::vector<std::string> inputs;
    for (int i = 0; i < std::stoi(a["inputs"]); ++i) inputs.push_back(kSources[static_cast<size_t>(i) % kSources.size()]);
    t5s::GenerationOptions g;
    g.do_sample = true;
    g.top_k = 50;
    g.num_return_sequences = std::stoi(a["num-return"]);
    g.max_new_tokens = g.min_new_tokens = std::stoi(a["new-tokens"]);  // random weights: force the length
    g.batch_size = std::stoi(a["batch"]);
    g.seed = 7;

    std::vector<double> gen_s, embed_s, ratio;
    size_t texts_embedded = 0, tokens_embedded = 0;
    const int rounds = std::stoi(a["rounds"]);
    for (int r = -1; r < rounds; ++r) {  // round -1 warms up both
        double t0 = now_s();
        const auto results = model->generate(inputs, g);
        const double gen = now_s() - t0;
        std::vector<std::string> texts;
        for (const auto& res : results) {
            texts.push_back(res.input);
            for (const auto& c : res.candidates) texts.push_back(c.text);
        }
        t0 = now_s();
        const auto rows = embedder->embed(texts);
        double checksum = 0;
        size_t k = 0;
        for (const auto& res : results) {
            const size_t src = k++;
            for (size_t c = 0; c < res.candidates.size(); ++c) checksum += t5s::cosine_similarity(rows[src], rows[k++]);
        }
        const double emb = now_s() - t0;
        if (r < 0) continue;
        gen_s.push_back(gen);
        embed_s.push_back(emb);
        ratio.push_back(100.0 * emb / gen);  // measured back to back: robust to a machine whose speed drifts
        texts_embedded = texts.size();
        tokens_embedded = 0;
        for (const auto& ids : embedder->token_ids(texts)) tokens_embedded += ids.size();
        if (checksum != checksum) return 3;  // NaN: never silently
    }
    const double g_med = median(gen_s), e_med = median(embed_s);
    nlohmann::json out = {{"threads", rt.threads},
                          {"dtype", a["dtype"]},
                          {"embedder_dtype", embedder->info().precision},
                          {"inputs", inputs.size()},
                          {"num_return", g.num_return_sequences},
                          {"new_tokens", g.max_new_tokens},
                          {"texts_embedded_per_round", texts_embedded},
                          {"tokens_embedded_per_round", tokens_embedded},
                          {"embedder", {{"dim", embedder->info().dim}, {"max_seq_length", embedder->info().max_seq_length}}},
                          {"generate_s", gen_s},
                          {"embed_s", embed_s},
                          {"generate_median_s", g_med},
                          {"embed_median_s", e_med},
                          {"added_percent", 100.0 * e_med / g_med},
                          {"added_percent_per_round", ratio},
                          {"added_percent_median_of_rounds", median(ratio)}};
    std::cout << out.dump() << std::endl;
    return 0;
}
