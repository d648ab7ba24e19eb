// t5studio generate: candidates for each input with every generation control. Inputs from
// --text (repeatable) -> one JSON document, or --input FILE (text, JSONL, CSV, TSV or a Label Studio
// export, with optional spans and label: the one input reader, t5s/input_reader.h; streamed,
// cli/input_rows.h) -> one JSONL line per input with its global "index", flushed as each batch
// finishes; --shard I/N (or --shard-from-env) takes a share of the file's batches (the rule is in
// shard.h), --out FILE appends there and resumes a killed run; --output FILE writes every candidate
// as a labelled row in the format its name says instead (cli/labelled_output.h); --report DIR adds
// the run's score statistics and plots (cli/run_report.h).
#include <chrono>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <set>

#include "cli/commands.h"
#include "cli/generation_flags.h"
#include "cli/input_rows.h"
#include "cli/labelled_output.h"
#include "cli/quality_flags.h"
#include "cli/recipe_run.h"
#include "cli/run_report.h"
#include "cli/shard.h"
#include "common/args.h"
#include "common/generate_recorder.h"
#include "common/json_output.h"
#include "common/runtime_flags.h"
#include "t5s/candidate_scores.h"
#include "t5s/error.h"
#include "t5s/generation_config.h"
#include "t5s/history_store.h"
#include "t5s/seed.h"
#include "t5s/source_text.h"

namespace t5s::cli {
namespace {

struct FileRun {
    Shard shard;
    std::string out;            // "" = stdout
    bool sharded = false;       // --shard / --shard-from-env given
    std::string output;         // --output FILE: labelled rows in output_format ("" = the JSONL lines)
    std::string output_format;  // --output-format ("" = the --output name's, else the input's)
    bool force = false;         // --force: --output may replace an existing file
};

FileRun file_run_from_flags(const Args& a) {
    FileRun f;
    if (a.has("shard") && a.has("shard-from-env")) throw UsageError("give --shard I/N or --shard-from-env, not both");
    if (a.has("shards") && !a.has("shard-from-env"))
        throw UsageError("--shards N goes with --shard-from-env (JOB_COMPLETION_INDEX)");
    if (a.has("shard")) f.shard = parse_shard(a.get("shard"));
    if (a.has("shard-from-env")) f.shard = shard_from_env([](const char* n) { return std::getenv(n); }, a.get_int("shards", 0));
    f.sharded = a.has("shard") || a.has("shard-from-env");
    f.out = a.get("out");
    if ((f.sharded || !f.out.empty()) && !a.has("input")) throw UsageError("--shard/--shard-from-env/--out need --input FILE");
    if ((f.sharded || !f.out.empty()) && a.get("batch-size") == "auto")
        throw UsageError(
            "--batch-size auto cannot be used with --shard/--out: every shard and every rerun must form the same batches");
    if (f.sharded && a.has("sample") && !a.has("seed"))
        throw UsageError("--sample with --shard needs --seed S: every shard must derive its seeds from the same one");
    f.output = a.get("output");
    f.output_format = a.get("output-format");
    if (!f.output.empty() && (f.sharded || !f.out.empty() || !a.has("input")))
        throw UsageError("--output needs --input and goes without --shard/--out (merge the parts, then convert)");
    if (!f.output_format.empty() && f.output.empty()) throw UsageError("--output-format goes with --output FILE");
    f.force = a.has("force");
    if (f.force && f.output.empty()) throw UsageError("--force goes with --output FILE");
    if (!f.output_format.empty() && f.output_format != "jsonl" && f.output_format != "csv" && f.output_format != "tsv" &&
        f.output_format != "labelstudio")
        throw UsageError("--output-format must be jsonl, csv, tsv or labelstudio, got '" + f.output_format + "'");
    return f;
}

std::string label_json_text(const nlohmann::json& label) {
    return label.is_null() ? "" : label.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// One row's JSONL line: its result, the row's label (carried to each of its candidates), its index.
std::string result_line(const GenerationResult& r, const nlohmann::json& label, int64_t row, int64_t total, bool keep_dropped,
                        const std::string& prefix) {
    nlohmann::json j = result_json(r, keep_dropped);
    if (!prefix.empty()) j["task_prefix"] = prefix;  // the prefix applied, also when it is the model's default
    if (!label.is_null()) j["label"] = label;
    j["index"] = row;
    j["total_rows"] = total;
    return j.dump() + "\n";
}

// Whether a run samples: the request, or (under a recipe) any of its steps. A run that samples
// gives each batch a seed of its own, derived from the run's and the batch's first row, so that
// shards and resumed runs give what one whole run gives.
bool run_samples(const GenerationOptions& options, const RecipeRun* recipe) {
    if (options.do_sample) return true;
    if (!recipe) return false;
    const auto& steps = recipe->recipe().steps;
    for (size_t i = 0; i < steps.size(); ++i)
        if (step_options(steps[i], i, options).do_sample) return true;
    return false;
}

// --input FILE, read as a stream: global batches of options.batch_size rows; this shard's batches
// that are not yet in --out; one JSONL line per row (with its global "index"), written whole per batch.
// `samples`: run_samples.
template <class RunBatch>
int generate_file(const InputRows& input, const GenerationOptions& options, bool samples, const FileRun& f,
                  LabelledOutput* labelled, bool keep_dropped, RunBatch&& run_batch) {
    const int64_t total = input.size();
    const int64_t batch_size = options.batch_size;
    const WrittenBatches done = f.out.empty() ? WrittenBatches{} : batches_already_written(f.out, f.shard, batch_size, total);
    std::unique_ptr<AppendFile> out = f.out.empty() ? nullptr : std::make_unique<AppendFile>(f.out);
    // One seed per run: every batch derives its own from it and its first row's global index.
    const int64_t base_seed = samples ? resolve_seed(options.seed) : options.seed;
    int64_t written = 0;
    auto wanted = [&](int64_t b) { return f.shard.owns_batch(b) && !done.has(b); };
    input.for_each_batch_rows(batch_size, wanted, [&](int64_t first, const std::vector<InputRow>& batch) {
        GenerationOptions batch_options = options;
        if (samples) batch_options.seed = derive_seed(base_seed, first);
        std::vector<std::string> texts;
        std::vector<std::vector<Span>> spans;
        std::vector<std::string> labels;
        for (const auto& row : batch)
            texts.push_back(row.text), spans.push_back(row.spans), labels.push_back(label_json_text(row.label));
        std::string lines;
        int64_t row = first;
        for (const auto& r : run_batch(texts, spans, batch_options, labels)) {
            const InputRow& in = batch[static_cast<size_t>(row - first)];
            if (labelled) labelled->add(r, in);
            else lines += result_line(r, in.label, row, total, keep_dropped, batch_options.task_prefix);
            ++row;
        }
        if (out) out->append(lines);
        else std::cout << lines << std::flush;  // a killed run keeps what it printed
        written += static_cast<int64_t>(batch.size());
    });
    if (labelled) {
        labelled->commit();
        std::cout << nlohmann::json{{"output", f.output},
                                    {"format", to_string(labelled->format())},
                                    {"inputs", written},
                                    {"rows", labelled->rows()},
                                    {"bad_rows_skipped", input.bad_rows()}}
                         .dump()
                  << "\n";
    }
    if (out) {
        const nlohmann::json summary = {{"out", f.out},
                                        {"shard", f.shard.index},
                                        {"shards", f.shard.count},
                                        {"rows_written", written},
                                        {"rows_resumed", done.rows},
                                        {"total_rows", total}};
        std::cout << summary.dump() << "\n";
    }
    return 0;
}

// --skip-bad-rows: every skipped row on stderr (the first 10, then a count).
void report_bad_rows(const InputRows& input) {
    for (const auto& b : input.bad_row_samples())
        std::cerr << "t5studio generate: skipped bad row " << b.where << ": " << b.reason << "\n";
    if (input.bad_rows() > static_cast<int64_t>(input.bad_row_samples().size()))
        std::cerr << "t5studio generate: " << input.bad_rows() << " bad rows skipped in all\n";
}

}  // namespace

GenerationOptions options_from_flags(const Args& a, const GenerationConfig& model_defaults) {
    GenerationOptions o;
    // generation_config.json's defaults first, then the flags given (transformers: kwargs win).
    std::vector<std::string> given = generation_flags_given(a);
    apply_generation_config(model_defaults, std::set<std::string>(given.begin(), given.end()), &o);
    apply_generation_flags(a, &o);
    imply_sampling(&o, &given);
    imply_contrastive_top_k(&o, &given);
    if (!o.do_sample && o.num_return_sequences > o.num_beams) {  // the engine's rule, with how to get them on this command line
        const std::string n = std::to_string(o.num_return_sequences);
        throw Error(ErrorCode::InvalidArgument, "invalid generation setting: num_return_sequences (" + n +
                                                    ") must be <= num_beams (" + std::to_string(o.num_beams) +
                                                    ") without sampling: for " + n + " candidates add " + a.typed("sample") +
                                                    ", or give " + a.typed("beams") + " " + n);
    }
    validate_generation_options(o);
    return o;
}

// What the model's generation_config.json holds that is not applied: on stderr, one line each.
void warn_unapplied(const GenerationConfig& defaults) {
    for (const std::string& w : defaults.warnings) std::cerr << "t5studio generate: warning: " << w << "\n";
}

// --text --json: one document, {"results": [...]} with each candidate's route under a recipe, and
// the model's generation_config.json warnings.
nlohmann::json text_results_json(const std::vector<GenerationResult>& results, bool keep_dropped,
                                 const GenerationOptions& options, const GenerationConfig& model_defaults) {
    nlohmann::json all = nlohmann::json::array();
    for (const auto& r : results) {
        all.push_back(result_json(r, keep_dropped));
        if (!options.task_prefix.empty()) all.back()["task_prefix"] = options.task_prefix;
    }
    nlohmann::json doc = {{"results", all}};
    if (!model_defaults.warnings.empty()) doc["warnings"] = model_defaults.warnings;
    return doc;
}

// --text without --json: each input, then its candidates numbered with their scores.
void print_text_results(const std::vector<GenerationResult>& results) {
    for (const auto& r : results) {
        std::cout << r.input << "\n";
        for (size_t k = 0; k < r.candidates.size(); ++k)
            std::cout << "  " << k + 1 << ". " << r.candidates[k].text << "  (" << r.candidates[k].score << ")\n";
    }
}

const RuntimeFlags kGenerateRuntime{Device::Auto};

const CommandSpec kGenerateSpec = {
    "generate",
    "paraphrase candidates for each input, with every generation control",
    {
        {"model", "DIR",
         "model folder (or a LoRA adapter folder: its base with it); its generation_config.json gives the defaults of the flags "
         "below, its config.json's default task the --prefix",
         kModel},
        {"task", "NAME",
         "use the prefix of this task of the model's config.json (task_specific_params; `info` lists them) instead of --prefix"},
        {"text", "T", "an input text; all results come as one document (JSON with --json)", kRepeatable},
        {"input", "FILE",
         "inputs: text lines, JSONL (\"text\", optional \"spans\"/\"entities\" [[start, end, label], ...] in code points, "
         "\"label\"), CSV/TSV (header with text[, label, spans]) or a Label Studio export (.json); streamed; one JSONL line per "
         "input, per batch"},
        {"text-field", "NAME",
         "with --input: the column or key of the text (default: the first of text, sentence, sentence1, source, input, src, in "
         "any case)"},
        {"no-header", "", "with --input: a CSV/TSV without a header row, column 1 the text"},
        generation_flags(),  // every generation option (t5s/generation_fields.h)
        kGenerateRuntime.flags(),
        {"adapter", "DIR", "LoRA adapter folder (PEFT format) applied to the model"},
        {"history", "PATH", "record inputs and candidates in this history database (made if missing)"},
        {"shard", "I/N", "with --input: run shard I of N (round-robin batches of --batch-size rows)"},
        {"shard-from-env", "", "take I/N from a Slurm array or a Kubernetes Indexed Job (with --shards)"},
        {"shards", "N", "shard count for --shard-from-env under JOB_COMPLETION_INDEX"},
        {"out", "FILE", "with --input: append finished batches here (a rerun resumes) and print a summary"},
        {"output", "FILE",
         "with --input: write every candidate as a labelled row (its spans, the row's label, its source), atomically, in the "
         "format its name says (.jsonl, .csv, .tsv; .json: JSON lines or a Label Studio export as the input is); an existing "
         "file is refused unless --force; prints a summary"},
        {"output-format", "F",
         "with --output: jsonl, csv, tsv or labelstudio, for a name without those extensions (default: the input's; text input "
         "gives jsonl)"},
        {"force", "", "with --output: replace the file if it exists"},
        {"report", "DIR",
         "with --input: after the run, score statistics and plots (histograms, candidates per source) in DIR/README.md and "
         "DIR/plots/*.png; DIR must be new or empty"},
        {"skip-bad-rows", "", "with --input: skip bad rows (each named file:line on stderr) instead of failing at the first"},
        {"json", "", "with --text: print {\"results\": [...]} on stdout"},
        {"embedder", "DIR", "sentence-embedding model (sentence-transformers folder) for the similarity score", kModel},
        {"keep-dropped", "", "print the filtered-out candidates under \"dropped\" with their reason"},
        {"recipe", "FILE",
         "run an augmentation recipe (JSON: chained steps such as back-translation, each with its model, prefix and settings; "
         "docs/recipes.md) instead of one generation; the candidates of its candidate steps are judged against the source with "
         "these settings, each with its \"route\" in JSON output"},
    }};

int run_generate(const Argv& argv) {
    Args args(argv, kGenerateSpec);
    GenerationConfig model_defaults = load_model_generation_defaults(args.require("model"));  // + its default task prefix
    if (args.has("task") && args.has("prefix")) throw UsageError("give --task NAME or --prefix TEXT, not both");
    if (args.has("task")) model_defaults = with_task(std::move(model_defaults), args.get("task"));
    warn_unapplied(model_defaults);
    const GenerationOptions options_in = options_from_flags(args, model_defaults);  // validate before the (slow) model load
    if (args.all("text").empty() == !args.has("input")) throw UsageError("give --text (repeatable) or --input FILE");
    const FileRun file_run = file_run_from_flags(args);
    std::unique_ptr<RecipeRun> recipe;  // read and checked before the (slow) model load
    if (args.has("recipe")) recipe = std::make_unique<RecipeRun>(args.get("recipe"));
    const bool samples = run_samples(options_in, recipe.get());
    if (recipe && file_run.sharded && samples && !args.has("seed"))
        throw UsageError("--recipe " + args.get("recipe") +
                         " samples: with --shard it needs --seed S (every shard derives its seeds from the same one)");
    std::optional<InputRows> input;  // streamed: only one batch of it is in memory at a time
    if (args.has("input"))
        input.emplace(args.get("input"), args.has("skip-bad-rows") ? BadRowPolicy::Skip : BadRowPolicy::Fail,
                      text_fields({args.get("text-field"), "", args.has("no-header")}));
    if (args.has("skip-bad-rows") && !input) throw UsageError("--skip-bad-rows goes with --input FILE");
    for (const char* flag : {"text-field", "no-header"})
        if (args.has(flag) && !input) throw UsageError(std::string("--") + flag + " goes with --input FILE");
    if (input) report_bad_rows(*input);
    // Opened before the (slow) model load: an existing file is refused at once, and the rows go to a
    // temporary file that replaces it only when the run is complete.
    std::unique_ptr<LabelledOutput> labelled;
    if (!file_run.output.empty())
        labelled = std::make_unique<LabelledOutput>(
            file_run.output, output_format_for(file_run.output, file_run.output_format, input->format()), file_run.force);
    if (args.has("report") && !input) throw UsageError("--report goes with --input FILE");
    std::unique_ptr<RunReport> run_report;  // made now: a non-empty folder is refused before the model loads
    if (args.has("report")) run_report = std::make_unique<RunReport>(args.get("report"));
    const std::vector<std::string> texts = args.all("text");
    for (const auto& t : texts) require_source_text(t, "--text");  // the rule and words of a file row's text
    const RuntimeOptions runtime = kGenerateRuntime.read(args);
    const auto embedder = embedder_from_flags(args, runtime);
    auto model = Model::load(args.require("model"), with_adapter(runtime, args.get("adapter")));
    if (recipe) recipe->load_models(*model, runtime);
    GenerateRecorder recorder(args.get("history"), *model);
    if (recipe) recorder.set_recipe(recipe_record_json(args.get("recipe")));  // the history says how its rows were made
    GenerationOptions options = options_in;
    if (args.get("batch-size") == "auto") {
        options.batch_size = measure_max_batch(*model, 64, options.max_new_tokens);
        std::cerr << "t5studio generate: measured batch size " << options.batch_size << "\n";
    }

    auto run_batch = [&](const std::vector<std::string>& batch, const std::vector<std::vector<Span>>& spans,
                         const GenerationOptions& batch_options, const std::vector<std::string>& labels) {
        const auto start = std::chrono::steady_clock::now();
        auto results = recipe ? recipe->run(embedder.get(), batch, spans, batch_options)
                              : generate_scored(*model, embedder.get(), batch, spans, batch_options);  // task_prefix: --prefix
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        recorder.record(results, batch_options, ms, labels);
        if (run_report) run_report->add(results);
        return results;
    };

    const bool keep_dropped = args.has("keep-dropped");
    if (input) {
        const int rc = generate_file(*input, options, samples, file_run, labelled.get(), keep_dropped, run_batch);
        if (run_report) {
            run_report->write(args.get("model"));
            std::cerr << "t5studio generate: report in " << run_report->dir() << "/README.md\n";
        }
        return rc;
    }
    const auto results = run_batch(texts, {}, options, {});
    if (args.has("json")) print_json(text_results_json(results, keep_dropped, options, model_defaults));
    else print_text_results(results);
    return 0;
}

}  // namespace t5s::cli
