#include "controllers/model_controller.h"

#include <algorithm>

namespace t5s::ui {

RuntimeOptions ModelController::runtime() const {
    const auto& m = s.model;
    RuntimeOptions r;
    r.device = m.device;
    r.precision = m.precision;
    r.threads = m.threads;
    return r;
}

void ModelController::load_model() { load_model(s.model.path_input, std::string()); }

void ModelController::load_model(const std::string& dir, const std::string& adapter) {
    auto& m = s.model;
    m.path_input = dir;
    if (m.path_input.empty()) {
        m.error = "type or drop a model folder first";
        return;
    }
    LoadModel cmd;
    cmd.dir = m.path_input;
    cmd.runtime = runtime();
    cmd.runtime.adapter = adapter;
    m.error.clear();
    m.load_job = submit(std::move(cmd));
    if (m.load_job) {
        s.job_kind[m.load_job] = "loading model";
        ctx.log(false, std::string("loading ") + m.path_input + " (" + to_string(m.device) + ", " + to_string(m.precision) + ")");
    }
}

void ModelController::load_model(const std::string& dir) { load_model(dir, std::string()); }

void ModelController::add_adapter() {
    auto& m = s.model;
    if (!m.info) {
        m.adapter_error = "load a base model first";
        return;
    }
    if (m.adapter_input.empty()) {
        m.adapter_error = "type an adapter folder (adapter_config.json, adapter_model.safetensors)";
        return;
    }
    use_adapter(m.adapter_input);
}

void ModelController::use_adapter(const std::string& dir) {
    auto& m = s.model;
    if (!m.info || m.adapter_job) return;
    m.adapter_error.clear();
    m.adapter_job = submit(SetAdapter{dir});
    if (m.adapter_job) s.job_kind[m.adapter_job] = dir.empty() ? "removing adapter" : "applying adapter";
}

void ModelController::load_embedder() {
    auto& m = s.model;
    if (m.embedder_input.empty()) {
        m.embedder_error = "type a sentence-transformers folder first (modules.json, 1_Pooling, ...)";
        return;
    }
    m.embedder_error.clear();
    m.embedder_job = submit(LoadEmbedder{m.embedder_input, runtime()});
    if (m.embedder_job) {
        s.job_kind[m.embedder_job] = "loading embedding model";
        ctx.log(false, "loading embedding model " + m.embedder_input);
    }
}

void ModelController::unload_embedder() {
    auto& m = s.model;
    m.embedder_error.clear();
    m.embedder_job = submit(UnloadEmbedder{});
}

void ModelController::embedder_event(const Event& event) {
    auto& m = s.model;
    if (auto* e = std::get_if<EmbedderLoaded>(&event)) {
        if (e->job != m.embedder_job) return;
        m.embedder_job = 0;
        m.embedder = e->info;
        m.embedder_load_ms = e->load_ms;
        const std::string p = e->info.dir.string();
        auto& r = m.recent_embedders;
        r.erase(std::remove(r.begin(), r.end(), p), r.end());
        r.insert(r.begin(), p);
        if (r.size() > 10) r.resize(10);
        ctx.note(p);
        ctx.log(false, "embedding model loaded: " + p + " (" + e->info.architecture + ", " + e->info.pooling + ", dim " +
                           std::to_string(e->info.dim) + ")");
    } else if (auto* u = std::get_if<EmbedderUnloaded>(&event)) {
        if (u->job == m.embedder_job) m.embedder_job = 0;
        m.embedder.reset();
        ctx.log(false, "embedding model unloaded");
    }
}

void ModelController::browse(const std::string& dir) {
    s.model.browser_dir = dir;
    s.model.browser_job = submit(ListDirectory{dir});
}

void ModelController::apply(const Event& event) {
    auto& m = s.model;
    if (auto* a = std::get_if<AdapterSet>(&event)) {
        if (a->job != m.adapter_job) return;
        m.adapter_job = 0;
        m.active_adapter = a->dir.string();
        if (m.info) remember_adapter(m.info->dir.string(), m.active_adapter);
        ctx.log(false, m.active_adapter.empty()
                           ? std::string("adapter removed")
                           : "adapter " + m.active_adapter + " (" + std::to_string(a->parameters) + " parameters)");
    } else if (auto* e = std::get_if<ModelLoaded>(&event)) {
        if (e->job != m.load_job) return;
        m.load_job = 0;
        m.info = e->info;
        m.load_ms = e->load_ms;
        m.recommended = e->recommended.reason.empty() ? std::string()
                                                      : std::string(to_string(e->recommended.precision)) + " on " +
                                                            e->recommended.name + " — " + e->recommended.reason;
        m.error.clear();
        m.active_adapter = e->info.adapter.string();
        remember_adapter(e->info.dir.string(), m.active_adapter);
        const std::string p = e->info.dir.string();
        auto& r = m.recent;
        r.erase(std::remove(r.begin(), r.end(), p), r.end());
        r.insert(r.begin(), p);
        if (r.size() > 10) r.resize(10);
        // The prefix used with this model before, else the one it records as its default task
        // (a fine-tune's training prefix: t5s/generation_config.h); else the field stays as it is.
        if (auto it = m.task_prefix.find(p); it != m.task_prefix.end()) s.ws.task_prefix = it->second;
        else if (e->info.generation_config.task_prefix) s.ws.task_prefix = *e->info.generation_config.task_prefix;
        ctx.note(p);
        ctx.log(false, "model loaded: " + p + " (" + e->info.variant + ", " + e->info.precision + ", " + e->info.device + ")");
    } else if (std::holds_alternative<ModelUnloaded>(event)) {
        m.info.reset();
    } else if (std::holds_alternative<EmbedderLoaded>(event) || std::holds_alternative<EmbedderUnloaded>(event)) {
        embedder_event(event);
    } else if (auto* d = std::get_if<DirectoryListing>(&event)) {
        if (d->job != m.browser_job) return;
        m.browser_job = 0;
        m.browser_dir = d->dir.string();
        m.browser_entries = d->entries;
        m.browser_error = d->error;
        ctx.note(m.browser_dir);
        for (const auto& entry : d->entries) ctx.note(entry.name);
    }
}

void ModelController::failed(const JobFailed& e) {
    const std::string msg = ctx.log_failure(e);
    if (e.job == s.model.load_job) {
        s.model.load_job = 0;
        s.model.error = msg;
    } else if (e.job == s.model.embedder_job) {
        s.model.embedder_job = 0;
        s.model.embedder_error = msg;
    } else if (e.job == s.model.adapter_job) {
        s.model.adapter_job = 0;
        s.model.adapter_error = msg;
    } else if (e.job == s.model.browser_job) {
        s.model.browser_job = 0;
        s.model.browser_error = msg;
    }
}

void ModelController::remember_adapter(const std::string& base, const std::string& adapter) {
    if (adapter.empty()) return;
    auto& list = s.model.adapters[base];
    if (std::find(list.begin(), list.end(), adapter) == list.end()) list.push_back(adapter);
}

void ModelController::engine_died() {
    s.model.load_job = 0;
    s.model.embedder_job = 0;
    s.model.adapter_job = 0;
}

}  // namespace t5s::ui
