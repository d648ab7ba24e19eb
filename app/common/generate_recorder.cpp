#include "common/generate_recorder.h"

#include "common/args.h"

#include "t5s/history_store.h"
#include "t5s/learning.h"

namespace t5s::cli {

struct GenerateRecorder::Impl {
    HistoryStore store;
    const ModelInfo& info;
    std::string version_of;  // the adapter folder adapter_version was read for
    int64_t adapter_version = 0;
    std::string recipe_json;  // the recipe that makes the generations ("" = none)
};

GenerateRecorder::GenerateRecorder(const std::string& history_path, const Model& model) {
    if (!history_path.empty()) impl_.reset(new Impl{HistoryStore(history_path), model.info()});
}

void GenerateRecorder::record(const std::vector<GenerationResult>& results, const GenerationOptions& options, double elapsed_ms,
                              const std::vector<std::string>& labels) {
    if (!impl_) return;
    std::vector<GenerationRecord> records;
    for (const auto& r : results) {
        GenerationRecord rec = generation_record_of(r);
        rec.settings_json = settings_json_with_spans(generation_options_to_json(options), r);
        rec.model_path = impl_->info.dir.string();
        rec.model_hash = impl_->info.content_hash;
        rec.precision = impl_->info.precision;
        rec.device = impl_->info.device;
        rec.adapter = impl_->info.adapter.string();
        if (rec.adapter != impl_->version_of) {  // a learning-loop version names itself (manifest.json)
            impl_->adapter_version = adapter_version_of_dir(rec.adapter);
            impl_->version_of = rec.adapter;
        }
        rec.adapter_version = impl_->adapter_version;
        rec.total_ms = elapsed_ms / static_cast<double>(results.size());
        rec.origin = "cli";
        rec.recipe_json = impl_->recipe_json;
        if (records.size() < labels.size()) rec.label_json = labels[records.size()];
        records.push_back(std::move(rec));
    }
    impl_->store.record_many(records);  // one transaction per batch
}

void GenerateRecorder::set_recipe(std::string recipe_json) {
    if (impl_) impl_->recipe_json = std::move(recipe_json);
}

GenerateRecorder::~GenerateRecorder() = default;

}  // namespace t5s::cli
