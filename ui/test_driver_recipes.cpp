// Test-script ops of the workspace's recipe: the picker and the editor through the calls their
// widgets make, and checks of the parser's line and of the routes in the candidate list.
#include <filesystem>
#include <iostream>

#include "test_driver.h"

namespace t5s::ui {

namespace {

// A shipped recipe by its file name, else the argument as a path.
std::string recipe_path(const RecipeVm& r, const std::string& arg) {
    for (const std::string& path : r.shipped)
        if (std::filesystem::path(path).filename() == arg) return path;
    return arg;
}

}  // namespace

bool TestDriver::recipe_step(const ScriptStep& st, Controller& ctl) {
    RecipeVm& r = ctl.state().ws.recipe;
    if (st.op == "recipe") {
        if (st.arg != "none" && recipe_path(r, st.arg) == st.arg && !std::filesystem::exists(st.arg))
            return fail("recipe: no shipped recipe and no file named " + st.arg), true;
        ctl.workspace().choose_recipe(st.arg == "none" ? "" : recipe_path(r, st.arg));
        std::cout << "script: recipe " << (r.active() ? r.path : "None") << ": " << (r.error.empty() ? r.steps : r.error) << "\n";
    } else if (st.op == "recipe_text") {
        r.editor_open = true;
        r.text = unescaped_script_text(st.arg);
        ctl.workspace().check_recipe();
    } else if (st.op == "expect_recipe_error") {
        ctl.workspace().check_recipe();
        if (r.error.find(st.arg) == std::string::npos)
            return fail("expect_recipe_error: the recipe line shows '" + r.error + "'"), true;
        if (r.error.find('\n') != std::string::npos) return fail("expect_recipe_error: the message is not one line"), true;
        std::cout << "script: " << r.error << "\n";
    } else if (st.op == "save_recipe") {
        if (phase_ == 0) {
            ctl.workspace().save_recipe_as(st.arg);
            if (!r.save_job) return fail("save_recipe: not sent: " + r.error), true;
            phase_ = 1;
            return true;
        }
        if (r.save_job) return true;  // the io lane writes it
        if (r.path != st.arg || !std::filesystem::exists(st.arg)) return fail("save_recipe: not saved: " + r.error), true;
    } else if (st.op == "expect_routes") {
        step_expect_routes(st, ctl);
        return true;
    } else if (st.op == "expect_batch_routes") {
        const BatchVm& b = ctl.state().batch;
        if (b.phase != BatchPhase::Done) return fail("expect_batch_routes: the batch did not finish: " + b.error), true;
        size_t rows = 0;
        for (const auto& row : b.results) {
            if (row.first.empty()) continue;
            if (route_steps(row.route) != st.arg)
                return fail("expect_batch_routes: a row came by '" + route_steps(row.route) + "'"), true;
            if (row.route.back().text != row.first)
                return fail("expect_batch_routes: a row's last leg is not its candidate"), true;
            ++rows;
        }
        if (rows == 0) return fail("expect_batch_routes: no row has a candidate"), true;
        std::cout << "script: " << rows << " batch rows came by " << st.arg << "\n";
    } else {
        return false;
    }
    next();
    return true;
}

void TestDriver::step_expect_routes(const ScriptStep& st, Controller& ctl) {
    const CandidateList& list = ctl.state().ws.list;
    if (list.empty()) return fail("expect_routes: no candidates shown");
    for (const CandidateVm& c : list.items()) {
        if (route_steps(c.route) != st.arg) return fail("expect_routes: a candidate came by '" + route_steps(c.route) + "'");
        if (c.route.back().text != c.text)
            return fail("expect_routes: the last leg's text is not the candidate's: " + c.route.back().text);
        std::cout << "script: " << c.text << "  [" << route_steps(c.route) << "]";
        for (const RouteLeg& leg : c.route) std::cout << "  " << leg.step << ": " << leg.text;
        std::cout << "\n";
    }
    next();
}

}  // namespace t5s::ui
