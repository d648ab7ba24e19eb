// Test-script ops of the learning loop: the workspace switch, decisions on candidates
// (accept the Nth, edit the Nth), "learn now" and waiting for its round, the versions listing, and
// "use this one" — each through the controller the buttons call, waiting on the engine's events.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "test_driver.h"

namespace t5s::ui {

namespace {

double now_seconds() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

}  // namespace

bool TestDriver::learning_step(const ScriptStep& st, Controller& ctl) {
    auto& s = ctl.state();
    auto& l = s.learn;
    if (st.op == "learn_switch") {  // on | off
        ctl.learning().set_enabled(st.arg == "on");
        next();
    } else if (st.op == "learn_settings") {  // EVERY STEPS [LR]
        std::istringstream in(st.arg);
        in >> l.round.every >> l.round.max_steps;
        if (double lr = 0; in >> lr) l.round.lr = lr;
        next();
    } else if (st.op == "decide") {  // accept N | edit N TEXT | edit N +SUFFIX (N: 1-based candidate; + appends)
        std::istringstream in(st.arg);
        std::string what;
        int n = 0;
        in >> what >> n;
        if (n < 1 || n > int(s.ws.list.size())) return fail("decide: no candidate " + std::to_string(n)), true;
        s.ws.list.select(n - 1);
        if (what == "accept") {
            ctl.accept();
        } else {
            std::string text;
            std::getline(in, text);
            text = text.substr(std::min(text.size(), text.find_first_not_of(' ')));
            ctl.begin_edit();
            if (!text.empty() && text[0] == '+') s.ws.edit_buffer += text.substr(1);
            else s.ws.edit_buffer = text;
            ctl.commit_edit();
        }
        next();
    } else if (st.op == "learn_now") {
        if (!ctl.learning().learn_now()) return fail("learn now did not start: " + l.error), true;
        next();
    } else if (st.op == "wait_learn") {  // [S]: the round ended (adopted, rejected or waiting)
        if (phase_ == 0) {
            deadline_ = now_seconds() + (st.arg.empty() ? 300.0 : std::atof(st.arg.c_str()));
            phase_ = 1;
        }
        if (l.round_job == 0) {
            if (!l.last || !l.error.empty()) return fail("learning round failed: " + l.error), true;
            std::cout << "learning: " << round_summary(*l.last) << "\n";
            return next(), true;
        }
        if (now_seconds() > deadline_) fail("learning round still running at step " + std::to_string(l.step));
    } else if (st.op == "expect_versions") {  // N [CURRENT]: at least N adopted versions listed, CURRENT in use (-2: the newest)
        std::istringstream in(st.arg);
        size_t n = 0;
        int64_t current = -1;
        in >> n >> current;
        if (current == -2 && !l.versions.empty()) current = l.versions.back().version;
        if (phase_ == 0) {
            deadline_ = now_seconds() + 60.0;
            phase_ = 1;
            ctl.learning().refresh();
        }
        if (l.list_job == 0 && l.use_job == 0 && l.versions.size() >= n && (current < 0 || l.current == current)) {
            std::cout << "learning: " << l.versions.size() << " versions, v" << l.current << " in use, active adapter '"
                      << s.model.active_adapter << "'; status: " << learning_status_line(l, 0) << "\n";
            return next(), true;
        }
        if (now_seconds() > deadline_)
            fail("expected " + std::to_string(n) + " versions (current " + std::to_string(current) + "), have " +
                 std::to_string(l.versions.size()) + " (current " + std::to_string(l.current) + ")");
    } else if (st.op == "use_version") {  // N | latest ("use this one" on a row of the Learning window)
        if (st.arg == "latest" && l.versions.empty()) return fail("use_version latest: no versions"), true;
        ctl.learning().use_version(st.arg == "latest" ? l.versions.back().version : std::atoll(st.arg.c_str()));
        next();
    } else if (st.op == "open_learning") {
        ctl.perform(Action::OpenLearning);
        next();
    } else {
        return false;
    }
    return true;
}

}  // namespace t5s::ui
