// Test-script ops of Advanced decoding and Paste settings: the paste box and the field text boxes
// through the calls their Apply button and edits make, and checks of the workspace's settings and
// of the last paste's not-applied list.
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "test_driver.h"

namespace t5s::ui {

namespace {

bool same_value(const nlohmann::json& want, const nlohmann::json& got) {
    if (want.is_number() && got.is_number())
        return std::fabs(want.get<double>() - got.get<double>()) <= 1e-6 * std::max(1.0, std::fabs(want.get<double>()));
    return want == got;
}

}  // namespace

bool TestDriver::decoding_step(const ScriptStep& st, Controller& ctl) {
    auto& ws = ctl.state().ws;
    auto& paste = ws.decoding.paste;
    if (st.op == "paste_settings") {  // TEXT: the box's text, then Apply
        paste.open = true;
        paste.text = unescaped_script_text(st.arg);
        ctl.workspace().paste_settings();
        for (const std::string& line :
             paste.result ? pasted_settings_lines(*paste.result) : std::vector<std::string>{paste.error})
            std::cout << "script: " << line << "\n";
    } else if (st.op == "expect_settings") {  // JSON: each field given has this value now
        const nlohmann::json want = nlohmann::json::parse(st.arg, nullptr, false);
        if (!want.is_object()) return fail("expect_settings: not a JSON object: " + st.arg), true;
        const nlohmann::json got = nlohmann::json::parse(generation_options_to_json(ws.options));
        for (const auto& [key, value] : want.items()) {
            if (!got.contains(key)) return fail("expect_settings: no setting '" + key + "'"), true;
            if (!same_value(value, got[key]))
                return fail("expect_settings: " + key + " is " + got[key].dump() + ", expected " + value.dump()), true;
        }
    } else if (st.op == "expect_not_applied") {  // KEY...: exactly these keys of the last paste were not applied
        if (!paste.result) return fail("expect_not_applied: the last paste was not read: " + paste.error), true;
        std::set<std::string> want, got;
        std::istringstream in(st.arg);
        for (std::string key; in >> key;) want.insert(key);
        for (const NotAppliedSetting& n : paste.result->not_applied) got.insert(n.key);
        if (want != got) {
            std::string listed;
            for (const auto& k : got) listed += " " + k;
            return fail("expect_not_applied: the paste did not apply:" + (listed.empty() ? std::string(" nothing") : listed)),
                   true;
        }
    } else if (st.op == "open_advanced") {
        ws.decoding.open_advanced = true;
    } else if (st.op == "field_text") {  // NAME TEXT: typed into the field's box in Advanced decoding
        const auto sp = st.arg.find(' ');
        const std::string name = st.arg.substr(0, sp);
        const GenerationField* f = find_generation_field(name);
        if (!f) return fail("field_text: no generation field '" + name + "'"), true;
        ws.decoding.open_advanced = true;
        ctl.workspace().set_field_text(*f, sp == std::string::npos ? std::string() : st.arg.substr(sp + 1));
    } else if (st.op == "expect_field_error") {  // NAME: the field's box shows a message
        const std::string& error = ws.decoding.field_text[st.arg].error;
        if (error.empty()) return fail("expect_field_error: the " + st.arg + " box shows no message"), true;
        std::cout << "script: " << st.arg << ": " << error << "\n";
    } else {
        return false;
    }
    next();
    return true;
}

}  // namespace t5s::ui
