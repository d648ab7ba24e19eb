// Test-script ops of the Models window (test_script.h): downloads from a (local) Hub through the
// window's own actions, waits on the engine's events, checks the Local tab and opens a model.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "test_driver.h"

namespace t5s::ui {

namespace {

double now_seconds() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

int local_index(const UiState& s, const std::string& name) {
    for (size_t i = 0; i < s.models.local.size(); ++i)
        if (s.models.local[i].name == name) return int(i);
    return -1;
}

}  // namespace

bool TestDriver::models_step(const ScriptStep& st, Controller& ctl) {
    auto& m = ctl.state().models;
    if (st.op == "expect_models_open") {  // opened by the app itself (no model to open at start)
        if (!m.open) return fail("the Models window is not open"), true;
        std::cout << "models window open at start, tab " << (m.select_tab == 1 ? "download" : "local") << "\n";
        next();
    } else if (st.op == "models_tab") {
        ctl.models().open_models(st.arg == "download" ? 1 : 0);
        next();
    } else if (st.op == "download") {
        m.repo_input = st.arg;  // the free field, as typed
        if (!ctl.models().start_download_from_input()) return fail("download not started: " + m.error), true;
        next();
    } else if (st.op == "resume_download") {  // the last row's Resume button
        if (m.downloads.empty() || m.downloads.back().phase == DownloadPhase::Running) return fail("no download to resume"), true;
        const DownloadVm d = m.downloads.back();
        if (!ctl.models().start_download(d.repo + "@" + d.revision)) return fail("resume not started: " + m.error), true;
        next();
    } else if (st.op == "cancel_download") {
        if (m.downloads.empty() || m.downloads.back().phase != DownloadPhase::Running) return fail("no running download"), true;
        ctl.models().cancel_download(m.downloads.size() - 1);
        next();
    } else if (st.op == "wait_download_progress" || st.op == "wait_download") {
        step_wait_download(st, ctl);
    } else if (st.op == "expect_local") {
        step_expect_local(st, ctl);
    } else if (st.op == "open_local") {
        const int i = local_index(ctl.state(), st.arg);
        if (i < 0) return fail(st.arg + " is not in the Local tab"), true;
        m.selected = i;
        ctl.models().open_local(size_t(i));
        next();
    } else if (st.op == "expect_loaded") {
        const auto& s = ctl.state();
        const int i = local_index(s, st.arg);
        if (i < 0 || !s.model.info) return fail("expect_loaded: no model loaded or " + st.arg + " not listed"), true;
        if (s.model.info->dir.lexically_normal() != s.models.local[size_t(i)].dir.lexically_normal())
            return fail("loaded " + s.model.info->dir.string() + ", not " + s.models.local[size_t(i)].dir.string()), true;
        std::cout << "loaded from the Local tab: " << s.model.info->dir.string() << " (" << s.model.info->model_type << ")\n";
        next();
    } else {
        return false;
    }
    return true;
}

// wait_download_progress [S [MIN_BYTES]]: the last download is fetching and has MIN_BYTES (default 1)
// but not all; wait_download STATE [S]:
// it ended in STATE (done | cancelled | failed); ending in another state fails at once.
void TestDriver::step_wait_download(const ScriptStep& st, Controller& ctl) {
    const auto& m = ctl.state().models;
    std::istringstream in(st.arg);
    std::string want;
    double seconds = 60;
    int64_t min_bytes = 1;
    if (st.op == "wait_download") in >> want;
    in >> seconds >> min_bytes;
    if (phase_ == 0) {
        deadline_ = now_seconds() + seconds;
        phase_ = 1;
    }
    if (m.downloads.empty()) return fail("no download");
    const DownloadVm& d = m.downloads.back();
    if (st.op == "wait_download_progress") {
        if (d.phase == DownloadPhase::Running && d.step == "download" && d.done >= min_bytes && d.done < d.total) {
            std::cout << "download progress: " << download_progress_text(d) << " (" << d.file << ")\n";
            return next();
        }
        if (d.phase != DownloadPhase::Running) return fail(std::string("download ended (") + to_string(d.phase) + ") " + d.error);
    } else if (d.phase != DownloadPhase::Running) {
        if (want != to_string(d.phase)) return fail(std::string("download ended ") + to_string(d.phase) + ": " + d.error);
        std::cout << "download " << to_string(d.phase) << ": " << download_progress_text(d) << " "
                  << (d.phase == DownloadPhase::Done ? d.snapshot : d.error) << "\n";
        return next();
    }
    if (now_seconds() > deadline_) fail("download still " + d.step + " after " + std::to_string(int(seconds)) + " s");
}

// expect_local REPO: listed again, REPO is a row of the Local tab (with its size and memory fit).
void TestDriver::step_expect_local(const ScriptStep& st, Controller& ctl) {
    auto& s = ctl.state();
    if (phase_ == 0) {
        deadline_ = now_seconds() + 60.0;
        phase_ = 1;
        ctl.models().open_models(0);
        if (s.models.list_job == 0) ctl.models().refresh();
    }
    const int i = local_index(s, st.arg);
    if (s.models.list_job == 0 && i >= 0) {
        const auto& row = s.models.local[size_t(i)];
        const auto fits = memory_fits(row.parameters, s.models.available_bytes);
        std::cout << "local: " << row.name << " " << row.architecture << " " << row.parameters << " parameters, "
                  << row.disk_bytes << " bytes on disk, fp32 " << fits[0].label << ", " << row.dir.string() << "\n";
        if (row.parameters <= 0 || row.disk_bytes <= 0) return fail("row without parameters or size");
        return next();
    }
    if (s.models.list_job == 0 && !s.models.error.empty()) return fail("listing failed: " + s.models.error);
    if (now_seconds() > deadline_) fail(st.arg + " not in the Local tab (" + std::to_string(s.models.local.size()) + " rows)");
}

}  // namespace t5s::ui
