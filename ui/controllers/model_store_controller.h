#pragma once
// Models window: the model store as the engine sees it. Lists the local models (ListModels),
// deletes a repository from the cache (DeleteModel), downloads from the Hub (PullModel on the
// engine's download lane: progress, cancel, resume) and opens a model through the Model panel's
// own load path (T5 models) or as the embedding model (sentence encoders). Never touches the
// filesystem or the network itself.
#include <array>

#include "controllers/model_controller.h"

namespace t5s::ui {

// The curated catalogue (assets/model_catalogue.json: {"models": [{repo, kind, task_prefix,
// languages, parameters, licence, good_for}]}). Entries without a valid repo are skipped and
// named in *error; malformed JSON gives no entries and the parser's message.
std::vector<CatalogueEntry> parse_catalogue(const std::string& json_text, std::string* error);

// Memory to run a model at fp32 / bf16 / int8 next to `available` bytes: "fits" / "tight" / "too big".
struct MemoryFit {
    const char* precision;
    int64_t bytes = 0;
    std::string label;
};
std::array<MemoryFit, 3> memory_fits(int64_t parameters, int64_t available_bytes);

// "12.0 MiB / 40.0 MiB  1.2 MiB/s  ETA 23 s" (a download row's progress line).
std::string download_progress_text(const DownloadVm& d);

class ModelStoreController : public PanelController {
public:
    ModelStoreController(ControllerContext& context, ModelController& model) : PanelController(context), model_(model) {}

    void open_models(int tab = -1);                // show (and focus) the window; -1 keeps the tab
    void refresh();                                // ListModels (cache + models folder + recent folders)
    bool start_download(const std::string& text);  // "ORG/NAME[@REV]"; false (and error) if it cannot start
    bool start_download_from_input() { return start_download(s.models.repo_input); }
    void cancel_download(size_t index);          // stops resumably (the .incomplete file stays)
    void delete_model(const std::string& repo);  // the whole repository from the cache
    void open_local(size_t index);               // row of models.local
    void open_download(size_t index);            // a finished download's snapshot

    void apply(const Event& event) override;
    void failed(const JobFailed& failure) override;
    void engine_died() override;

private:
    void open_dir(const std::string& dir, const std::string& kind);
    DownloadVm* download_of(JobId job);
    ModelController& model_;
};

}  // namespace t5s::ui
