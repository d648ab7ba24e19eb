#include "decode/batch_decoder.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <chrono>
#include <iterator>
#include <limits>
#include <map>
#include <numeric>
#include <string>

#include "decode/batch_cache.h"
#include "decode/beam_constraints.h"
#include "decode/beam_search.h"
#include "decode/contrastive_search.h"
#include "decode/logits_processors.h"
#include "decode/request_settings.h"
#include "decode/stop_strings.h"
#include "decode/token_processors.h"
#include "spans/sentinel_guard.h"
#include "t5s/error.h"
#include "t5s/generation_fields.h"
#include "torch/step_decoding.h"
#include "torch/t5_network.h"
#include "torch/torch_errors.h"
#include "torch/vocab_kernels.h"

namespace t5s::decode {
namespace {

// The rows of one input, or of a cohort's inputs decoding as one (GroupSpec::cohort): rows of
// input i come before those of input i + 1. Greedy / sampling rows leave one by one as they end;
// a beam group keeps its beams until the search is done.
struct Group {
    std::vector<GroupId> ids;   // one per input
    std::vector<char> dropped;  // removed inputs whose rows decode on with the cohort's
    GenerationOptions options;
    int64_t per_input = 1;  // rows_for(options)
    int64_t start = 0;      // cache position of the group's first token
    int64_t rows = 0;       // rows in the batch now
    int step = 0;
    std::unique_ptr<BeamSearch> beam;
    StopCriteria stop;                               // stop_strings, max_time
    std::unique_ptr<ContrastiveSearch> contrastive;  // top_k rows per input still decoding
    std::vector<std::vector<int>> sentinels;         // protected spans (options.keep_sentinels): each input's sentinels
    std::vector<std::vector<int>> sources;           // each input's ids (the encoder processors read them)
    spans::SentinelRange sentinel_range;
    // Greedy / sampling.
    std::vector<at::Generator> generators;  // one per input: each samples as if alone
    at::Tensor sequences;                   // [rows, 1 + step] (start token included)
    std::vector<int64_t> active_rows;       // slot of each row: input * per_input + candidate
    at::Tensor scores_sum;                  // [slots] double
    std::vector<Candidate> out;             // [slots]

    int64_t input_of_row(int64_t row) const { return beam ? row / per_input : active_rows[static_cast<size_t>(row)] / per_input; }
    RowSources row_sources() const {
        RowSources out;
        for (int64_t r = 0; r < rows; ++r) out.push_back(&sources[static_cast<size_t>(input_of_row(r))]);
        return out;
    }
    int64_t index_of(GroupId id) const {
        auto it = std::find(ids.begin(), ids.end(), id);
        return it == ids.end() ? -1 : static_cast<int64_t>(it - ids.begin());
    }
    bool all_dropped_but(int64_t input) const {
        for (size_t i = 0; i < ids.size(); ++i) {
            if (static_cast<int64_t>(i) != input && !dropped[i]) return false;
        }
        return true;
    }
};

at::Tensor long_tensor(const std::vector<int64_t>& v, at::Device device) {
    return at::tensor(v, at::TensorOptions().dtype(at::kLong)).to(device);
}

// The row layout after a step: which groups stay (local[i]: the rows of group i that continue,
// empty when it leaves), in which order. A group that leaves has its place taken by the last group
// when that one has as many rows, so that one group's rows move instead of every row behind it.
std::vector<size_t> next_order(const std::vector<int64_t>& old_rows, const std::vector<std::vector<int64_t>>& local) {
    std::vector<size_t> order;
    for (size_t i = 0; i < local.size(); ++i) {
        if (!local[i].empty()) order.push_back(i);
    }
    for (size_t f = 0; f < local.size() && !order.empty(); ++f) {
        const size_t last = order.back();
        if (!local[f].empty() || last < f || static_cast<int64_t>(local[last].size()) != old_rows[f]) continue;
        order.pop_back();
        order.insert(std::upper_bound(order.begin(), order.end(), f), last);
    }
    return order;
}

const StepDecoding& step_decoding_of(const Model& model) {
    const StepDecoding* decoding = model.step_decoding();
    if (!decoding) throw Error(ErrorCode::Unsupported, "this model cannot be served: it has no step-by-step decoding");
    return *decoding;
}

// Rows whose text now ends with a stop string end, as </s> ends them (`ended`: host bools per row).
void mark_stop_strings(const StopCriteria& stop, const at::Tensor& sequences, at::Tensor& ended) {
    if (!stop.strings) return;
    const at::Tensor host = sequences.to(at::kCPU, at::kLong).contiguous();
    const std::vector<char> hit = stop.rows_ending(host.data_ptr<int64_t>(), host.size(0), host.size(1));
    bool* e = ended.data_ptr<bool>();
    for (size_t r = 0; r < hit.size(); ++r) e[r] = e[r] || hit[r];
}

// Specs that decode as one group (GroupSpec::cohort): indices into `specs`, in order.
std::vector<std::vector<size_t>> cohorts_of(const std::vector<GroupSpec>& specs) {
    std::vector<std::vector<size_t>> members;
    std::vector<std::string> options_of;  // per member list: its options as JSON
    for (size_t i = 0; i < specs.size(); ++i) {
        // transformers' group beam search stops on stop strings only when every row of its batch
        // ends with one: such an input searches alone, as it would in transformers.
        const GenerationOptions& o = specs[i].options;
        const bool shared = specs[i].cohort && !(o.num_beam_groups > 1 && !o.stop_strings.empty());
        std::string options = shared ? generation_options_to_json(o) : std::string();
        size_t m = 0;
        while (m < members.size() && !(shared && specs[members[m][0]].cohort == specs[i].cohort && options_of[m] == options)) ++m;
        if (m == members.size()) {
            members.emplace_back();
            options_of.push_back(std::move(options));
        }
        members[m].push_back(i);
    }
    return members;
}

}  // namespace

struct BatchDecoder::Impl {
    const Tokenizer* tokenizer;  // sentinels of protected spans (keep_sentinels); may be null without
    const StepDecoding& net;
    BatchCache cache;
    std::vector<std::unique_ptr<Group>> groups;  // in row order; a group's rows are contiguous
    std::map<GroupId, std::vector<Candidate>> results;
    std::shared_ptr<const TokenTexts> stop_texts;  // the tokenizer's tokens as stop strings read them, once needed

    Impl(const StepDecoding& n, const Tokenizer* t) : tokenizer(t), net(n) {}

    int64_t total_rows() const { return cache.rows(); }

    void reset() {
        cache = BatchCache();
        groups.clear();
    }

    // Positions for `need` more tokens: the cache moves left past positions no row uses any more
    // before it grows; growth leaves headroom so that arrivals on consecutive steps do not each
    // reallocate. Returns the capacity the cache needs.
    int64_t make_room(int64_t need) {
        if (groups.empty()) cache.clear();
        const int64_t capacity = cache.state().capacity;
        if (cache.length() + need <= capacity) return capacity;
        std::vector<int64_t> starts;
        for (const auto& g : groups) starts.insert(starts.end(), static_cast<size_t>(g->rows), g->start);
        const int64_t shift = cache.compact(starts);
        for (auto& g : groups) g->start -= shift;
        if (cache.length() + need <= capacity) return capacity;
        return std::max(cache.length() + need, capacity + capacity / 2);
    }

    Group* group_of(GroupId id, int64_t* input) const {
        for (auto& g : groups) {
            if ((*input = g->index_of(id)) >= 0) return g.get();
        }
        return nullptr;
    }

    // Keeps local[i] of group i (in the order next_order picks) and moves the cache rows with them.
    void rearrange(const std::vector<std::vector<int64_t>>& local);
    void remove_group(size_t index);

    void add(const std::vector<GroupSpec>& specs);
    void prepare_controls(Group& g);
    void add_group(const std::vector<GroupSpec>& specs, const std::vector<size_t>& members,
                   const std::vector<at::Tensor>& encoded);
    void pick_tokens(Group& g, at::Tensor& logits, at::Tensor& next, at::Tensor& logprob);
    std::vector<int64_t> step_greedy(Group& g, at::Tensor logits, StepReport& report);
    void process_inputs(const Group& g, at::Tensor& logits, const at::Tensor& sequences,
                        const std::vector<int64_t>& inputs) const;
    std::vector<int64_t> step_contrastive(Group& g, const at::Tensor& logits, const at::Tensor& hidden, StepReport& report);
    void share_taken_positions(std::vector<int64_t>& rows, int64_t offset, int64_t k);
    void finish_inputs(Group& g, const std::vector<int64_t>& finished, StepReport& report);
    void finish_beam(Group& g, StepReport& report);
    StepReport step();
};

void BatchDecoder::Impl::rearrange(const std::vector<std::vector<int64_t>>& local) {
    std::vector<int64_t> old_rows, offsets;
    int64_t offset = 0;
    for (const auto& g : groups) {
        old_rows.push_back(g->rows);
        offsets.push_back(offset);
        offset += g->rows;
    }
    const std::vector<size_t> order = next_order(old_rows, local);
    std::vector<int64_t> sources;
    std::vector<std::unique_ptr<Group>> kept;
    for (size_t i : order) {
        for (int64_t row : local[i]) sources.push_back(offsets[i] + row);
        groups[i]->rows = static_cast<int64_t>(local[i].size());
        kept.push_back(std::move(groups[i]));
    }
    groups = std::move(kept);
    if (groups.empty()) return cache.clear();
    cache.relocate(sources);
}

void BatchDecoder::Impl::remove_group(size_t index) {
    std::vector<std::vector<int64_t>> local(groups.size());
    for (size_t i = 0; i < groups.size(); ++i) {
        if (i == index) continue;
        for (int64_t r = 0; r < groups[i]->rows; ++r) local[i].push_back(r);
    }
    rearrange(local);
}

void BatchDecoder::Impl::add(const std::vector<GroupSpec>& specs) {
    std::vector<at::Tensor> ids;
    for (const auto& spec : specs)
        ids.push_back(
            long_tensor(std::vector<int64_t>(spec.input_ids.begin(), spec.input_ids.end()), net.device()).view({1, -1}));
    const std::vector<at::Tensor> encoded = net.encode_each(ids);
    for (const auto& members : cohorts_of(specs)) add_group(specs, members, encoded);
}

// The stopping criteria: stop strings read with the model's tokenizer, and max_time counted from
// the moment the group joins.
void BatchDecoder::Impl::prepare_controls(Group& g) {
    const GenerationOptions& o = g.options;
    if (!o.stop_strings.empty()) {
        if (!tokenizer) throw Error(ErrorCode::InvalidArgument, "stop_strings needs the model's tokenizer");
        if (!stop_texts) stop_texts = std::make_shared<const TokenTexts>(stop_string_token_texts(*tokenizer));
        g.stop.strings = std::make_shared<const StopStrings>(stop_texts, o.stop_strings);
    }
    if (o.max_time)
        g.stop.deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                                 std::chrono::duration<double>(*o.max_time));
}

void BatchDecoder::Impl::add_group(const std::vector<GroupSpec>& specs, const std::vector<size_t>& members,
                                   const std::vector<at::Tensor>& encoded) {
    auto g = std::make_unique<Group>();
    g->options = specs[members[0]].options;
    resolve_model_settings(&g->options, tokenizer, net.config().vocab_size);
    prepare_controls(*g);
    const GenerationOptions& o = g->options;
    const int64_t n = rows_for(o), inputs = static_cast<int64_t>(members.size());
    g->per_input = n;
    const auto dev = net.device();
    const int64_t capacity = make_room(o.max_new_tokens + 1);
    if (o.keep_sentinels) {
        if (!tokenizer) throw Error(ErrorCode::InvalidArgument, "protected spans need the model's tokenizer");
        g->sentinel_range = spans::sentinel_range(*tokenizer);
    }
    std::vector<at::Tensor> member_encoded;
    int64_t longest = 0;
    for (size_t k : members) {
        member_encoded.push_back(encoded[k]);
        longest = std::max(longest, encoded[k].size(1));
    }
    // The position-bias table is only computed when the cache grows (it is capacity^2 x heads).
    const int64_t table = capacity > cache.state().capacity ? capacity : 0;
    const std::vector<DecoderState> subs = net.start_decoding_each(member_encoded, table);
    cache.reserve(subs[0], n * inputs, inputs, longest);
    for (size_t m = 0; m < members.size(); ++m) {
        g->start = cache.append(subs[m], n, capacity);  // the same position for every member
        g->ids.push_back(specs[members[m]].id);
        if (o.keep_sentinels) g->sentinels.push_back(spans::sentinels_in(specs[members[m]].input_ids, g->sentinel_range));
        g->sources.push_back(specs[members[m]].input_ids);
    }
    g->dropped.assign(members.size(), 0);
    g->rows = n * inputs;
    if (o.num_beams > 1) {
        g->beam = make_beam_search(inputs, o, net.config(), dev, net.kernels().vocab);
        if (o.keep_sentinels) g->beam->set_sentinel_guard({g->sentinel_range, g->sentinels});
        g->beam->set_sources(g->sources);
        g->beam->set_stop_criteria(g->stop);
    } else if (is_contrastive_search(o)) {
        g->contrastive = std::make_unique<ContrastiveSearch>(inputs, o.top_k, net.config().decoder_start_token_id,
                                                             net.config().eos_token_id, o.max_new_tokens, dev);
        g->contrastive->set_stop_criteria(g->stop);
    } else {
        for (int64_t i = 0; i < inputs; ++i)
            g->generators.push_back(at::detail::createCPUGenerator(static_cast<uint64_t>(o.seed < 0 ? 0 : o.seed)));
        g->sequences =
            at::full({g->rows, 1}, net.config().decoder_start_token_id, at::TensorOptions().dtype(at::kLong).device(dev));
        for (int64_t r = 0; r < g->rows; ++r) g->active_rows.push_back(r);
        g->scores_sum = at::zeros({g->rows}, encoded[members[0]].options().dtype(at::kDouble));
        g->out.resize(static_cast<size_t>(g->rows));
    }
    groups.push_back(std::move(g));
}

// The next token of every row: the arg-max, or a draw per input from that input's own generator
// (its rows are contiguous), so that an input's draws do not depend on its cohort.
void BatchDecoder::Impl::pick_tokens(Group& g, at::Tensor& logits, at::Tensor& next, at::Tensor& logprob) {
    const GenerationOptions& o = g.options;
    if (!o.do_sample) {
        if (greedy_pick_cpu(logits, next, logprob, net.kernels().vocab)) return;
        next = std::get<1>(logits.max(-1));
        logprob = at::log_softmax(logits, -1).gather(1, next.unsqueeze(1)).squeeze(1);
        return;
    }
    std::vector<at::Tensor> nexts, logprobs;
    for (int64_t begin = 0; begin < g.rows;) {
        const int64_t input = g.input_of_row(begin);
        int64_t end = begin + 1;
        while (end < g.rows && g.input_of_row(end) == input) ++end;
        at::Tensor slice = logits.narrow(0, begin, end - begin), lp;
        nexts.push_back(sample_tokens(slice, o, g.generators[static_cast<size_t>(input)], &lp));
        logprobs.push_back(lp);
        begin = end;
    }
    next = nexts.size() == 1 ? nexts[0] : at::cat(nexts, 0);
    logprob = logprobs.size() == 1 ? logprobs[0] : at::cat(logprobs, 0);
}

// One greedy / sampling step for one group's rows; returns the rows (of the group) kept.
std::vector<int64_t> BatchDecoder::Impl::step_greedy(Group& g, at::Tensor logits, StepReport& report) {
    const GenerationOptions& o = g.options;
    const int64_t eos = net.config().eos_token_id;
    process_logits(logits, g.sequences, o, eos, /*include_warpers=*/false, g.row_sources());
    if (o.keep_sentinels) {
        std::vector<const std::vector<int>*> required;
        for (int64_t r = 0; r < g.rows; ++r) required.push_back(&g.sentinels[static_cast<size_t>(g.input_of_row(r))]);
        apply_sentinel_guard(logits, g.sequences, required, g.sentinel_range, o.max_new_tokens, eos);
    }
    at::Tensor next, next_logprob;
    pick_tokens(g, logits, next, next_logprob);
    g.scores_sum.index_add_(0, long_tensor(g.active_rows, logits.device()), next_logprob.to(at::kDouble));
    g.sequences = at::cat({g.sequences, next.unsqueeze(1)}, 1);
    g.step += 1;
    const bool last = g.step == o.max_new_tokens || g.stop.time_up();
    at::Tensor done = (next == eos).to(at::kCPU).contiguous();
    mark_stop_strings(g.stop, g.sequences, done);
    const bool* ended = done.data_ptr<bool>();
    std::vector<int64_t> keep;
    for (int64_t i = 0; i < g.rows; ++i) {
        if (!last && !ended[i]) keep.push_back(i);
    }
    if (keep.size() == static_cast<size_t>(g.rows)) return keep;
    const at::Tensor seqs = g.sequences.to(at::kCPU).contiguous();
    const at::Tensor scores = g.scores_sum.to(at::kCPU).contiguous();
    const int64_t width = seqs.size(1);
    std::vector<int64_t> still_active, ended_inputs;
    for (int64_t i = 0; i < g.rows; ++i) {
        const int64_t slot = g.active_rows[static_cast<size_t>(i)];
        if (!last && !ended[i]) {
            still_active.push_back(slot);
            continue;
        }
        const int64_t* row = seqs.data_ptr<int64_t>() + i * width;
        Candidate c;
        c.ids.assign(row + 1, row + width);
        c.score = scores.data_ptr<double>()[slot];
        g.out[static_cast<size_t>(slot)] = c;
        const int64_t input = slot / g.per_input;
        if (!g.dropped[static_cast<size_t>(input)])
            report.rows_finished.push_back(
                {g.ids[static_cast<size_t>(input)], static_cast<int>(slot % g.per_input), std::move(c)});
        if (ended_inputs.empty() || ended_inputs.back() != input) ended_inputs.push_back(input);
    }
    g.sequences = g.sequences.index_select(0, long_tensor(keep, g.sequences.device()));
    g.active_rows = std::move(still_active);
    finish_inputs(g, ended_inputs, report);
    return keep;
}

// The logits processors and the sentinel guard on one row of each of `inputs` (of the group).
void BatchDecoder::Impl::process_inputs(const Group& g, at::Tensor& logits, const at::Tensor& sequences,
                                        const std::vector<int64_t>& inputs) const {
    const int64_t eos = net.config().eos_token_id;
    RowSources sources;
    for (int64_t input : inputs) sources.push_back(&g.sources[static_cast<size_t>(input)]);
    process_logits(logits, sequences, g.options, eos, /*include_warpers=*/false, sources);
    if (!g.options.keep_sentinels) return;
    std::vector<const std::vector<int>*> required;
    for (int64_t input : inputs) required.push_back(&g.sentinels[static_cast<size_t>(input)]);
    apply_sentinel_guard(logits, sequences, required, g.sentinel_range, g.options.max_new_tokens, eos);
}

// One contrastive search step for one group's rows; returns, per row of the next step, the row
// (of the group) whose cache it continues. An input that ended is done (one candidate each).
std::vector<int64_t> BatchDecoder::Impl::step_contrastive(Group& g, const at::Tensor& logits, const at::Tensor& hidden,
                                                          StepReport& report) {
    const auto process = [&](at::Tensor& l, const at::Tensor& sequences, const std::vector<int64_t>& inputs) {
        process_inputs(g, l, sequences, inputs);
    };
    ContrastiveSearch::StepResult r = g.contrastive->step(logits, hidden, g.options.penalty_alpha, process);
    for (auto& f : r.finished) {
        if (g.dropped[static_cast<size_t>(f.input)]) continue;
        const GroupId id = g.ids[static_cast<size_t>(f.input)];
        Candidate c;
        c.ids = std::move(f.ids);
        c.score = f.score;
        report.rows_finished.push_back({id, 0, c});
        results[id].push_back(std::move(c));
        report.groups_finished.push_back(id);
    }
    return std::move(r.continued);
}

// A contrastive input's k rows hold the same cache but for the last position, where each decoded
// its own candidate: instead of copying the taken row whole into the others (what `rows`, from
// step_contrastive, asks of rearrange), only its last position is copied, and every row continues
// itself. `offset`: the group's first row in the batch.
void BatchDecoder::Impl::share_taken_positions(std::vector<int64_t>& rows, int64_t offset, int64_t k) {
    std::vector<int64_t> from, to;
    for (size_t block = 0; block < rows.size(); block += static_cast<size_t>(k)) {
        const int64_t taken = rows[block], first = taken / k * k;
        for (int64_t j = 0; j < k; ++j) {
            rows[block + static_cast<size_t>(j)] = first + j;
            if (first + j != taken) from.push_back(offset + taken), to.push_back(offset + first + j);
        }
    }
    cache.copy_last_position(from, to);
}

// Of the inputs that had rows end in this step, those with no rows left are done.
void BatchDecoder::Impl::finish_inputs(Group& g, const std::vector<int64_t>& inputs, StepReport& report) {
    for (int64_t input : inputs) {
        const bool running =
            std::any_of(g.active_rows.begin(), g.active_rows.end(), [&](int64_t slot) { return slot / g.per_input == input; });
        if (running || g.dropped[static_cast<size_t>(input)]) continue;
        const auto first = g.out.begin() + input * g.per_input;
        const GroupId id = g.ids[static_cast<size_t>(input)];
        results[id] = std::vector<Candidate>(std::make_move_iterator(first), std::make_move_iterator(first + g.per_input));
        report.groups_finished.push_back(id);
    }
}

void BatchDecoder::Impl::finish_beam(Group& g, StepReport& report) {
    auto best = g.beam->results(g.options.num_return_sequences);
    for (size_t input = 0; input < g.ids.size(); ++input) {
        if (g.dropped[input]) continue;
        auto& out = results[g.ids[input]];
        for (auto& s : best[input]) out.push_back(Candidate{"", std::move(s.ids), s.score});
        report.groups_finished.push_back(g.ids[input]);
    }
}

StepReport BatchDecoder::Impl::step() {
    StepReport report;
    if (groups.empty()) return report;
    std::vector<at::Tensor> tokens;
    bool hidden_needed = false;
    for (const auto& g : groups) {
        if (g->beam) tokens.push_back(g->beam->last_tokens());
        else if (g->contrastive) tokens.push_back(g->contrastive->last_tokens());
        else tokens.push_back(g->sequences.select(1, g->step));
        hidden_needed = hidden_needed || g->contrastive;
    }
    report.rows = static_cast<int>(total_rows());
    at::Tensor hidden;  // the decoder's final hidden states, which only contrastive search reads
    at::Tensor logits = net.decode_step_hidden(cache.state(), at::cat(tokens, 0), hidden_needed ? &hidden : nullptr);
    std::vector<std::vector<int64_t>> local(groups.size());
    int64_t offset = 0;
    for (size_t i = 0; i < groups.size(); ++i) {
        Group& g = *groups[i];
        at::Tensor slice = logits.narrow(0, offset, g.rows);
        const at::Tensor group_hidden = g.contrastive ? hidden.narrow(0, offset, g.rows) : at::Tensor();
        const int64_t first_row = offset;
        offset += g.rows;
        if (g.contrastive) {
            local[i] = step_contrastive(g, slice, group_hidden, report);
            share_taken_positions(local[i], first_row, g.per_input);
        } else if (g.beam) {
            const at::Tensor order = g.beam->step(slice, g.options).to(at::kCPU, at::kLong).contiguous();
            if (!g.beam->done()) {
                local[i].assign(order.data_ptr<int64_t>(), order.data_ptr<int64_t>() + order.numel());
            } else {
                finish_beam(g, report);
            }
        } else {
            local[i] = step_greedy(g, slice, report);
        }
    }
    rearrange(local);
    return report;
}

BatchDecoder::BatchDecoder(const Model& model)
    : impl_(std::make_unique<Impl>(step_decoding_of(model), model.has_tokenizer() ? &model.tokenizer() : nullptr)) {}
BatchDecoder::BatchDecoder(const StepDecoding& net, const Tokenizer* tokenizer) : impl_(std::make_unique<Impl>(net, tokenizer)) {}
BatchDecoder::~BatchDecoder() = default;

int BatchDecoder::rows_for(const GenerationOptions& o) { return decoding_rows_per_input(o); }

void BatchDecoder::add(const std::vector<GroupSpec>& specs) {
    if (specs.empty()) return;
    c10::InferenceMode guard;
    const size_t groups_before = impl_->groups.size();
    const int64_t rows_before = impl_->total_rows();
    try {
        with_out_of_memory_as_error([&] {
            impl_->add(specs);
            return 0;
        });
    } catch (...) {
        // All or none: the groups (and cache rows) this call added before the failure leave again.
        impl_->groups.resize(groups_before);
        std::vector<int64_t> kept(static_cast<size_t>(rows_before));
        std::iota(kept.begin(), kept.end(), int64_t{0});
        if (kept.empty()) {
            impl_->cache.clear();
        } else {
            impl_->cache.relocate(kept);
        }
        throw;
    }
}

void BatchDecoder::add(const GroupSpec& spec) { add(std::vector<GroupSpec>{spec}); }

void BatchDecoder::remove(GroupId group) {
    c10::InferenceMode guard;
    impl_->results.erase(group);
    auto& groups = impl_->groups;
    for (size_t i = 0; i < groups.size(); ++i) {
        Group& g = *groups[i];
        const int64_t input = g.index_of(group);
        if (input < 0) continue;
        if (g.all_dropped_but(input)) return impl_->remove_group(i);
        g.dropped[static_cast<size_t>(input)] = 1;
        return;
    }
}

void BatchDecoder::merge_live(GroupId group, const GenerationOptions& live) {
    int64_t input = 0;
    if (Group* g = impl_->group_of(group, &input)) g->options = merge_step_settings(g->options, live);
}

int BatchDecoder::rows_of(GroupId group) const {
    int64_t input = 0;
    const Group* g = impl_->group_of(group, &input);
    if (!g || g->dropped[static_cast<size_t>(input)]) return 0;
    if (g->beam) return static_cast<int>(g->per_input);
    if (g->contrastive) {
        const auto& alive = g->contrastive->alive();
        return std::find(alive.begin(), alive.end(), input) == alive.end() ? 0 : static_cast<int>(g->per_input);
    }
    return static_cast<int>(
        std::count_if(g->active_rows.begin(), g->active_rows.end(), [&](int64_t slot) { return slot / g->per_input == input; }));
}

StepReport BatchDecoder::step() {
    c10::InferenceMode guard;
    try {
        return with_out_of_memory_as_error([&] { return impl_->step(); });
    } catch (...) {
        impl_->reset();
        throw;
    }
}

std::vector<Candidate> BatchDecoder::take_results(GroupId group) {
    auto it = impl_->results.find(group);
    if (it == impl_->results.end()) return {};
    std::vector<Candidate> out = std::move(it->second);
    impl_->results.erase(it);
    return out;
}

void BatchDecoder::use_threads_here(int threads) {
    if (threads > 0) at::set_num_threads(threads);
}

int BatchDecoder::rows() const { return static_cast<int>(impl_->total_rows()); }
int BatchDecoder::groups() const {
    int inputs = 0;
    for (const auto& g : impl_->groups) inputs += static_cast<int>(std::count(g->dropped.begin(), g->dropped.end(), 0));
    return inputs;
}

}  // namespace t5s::decode
