#pragma once
// A Controller whose engine is a recorder (the UI logic tests' fake engine): every command the
// controller submits is kept in `sent` and gets the next job id; events are applied by the test.
#include <variant>
#include <vector>

#include "controller.h"

namespace t5s::ui::test {

struct RecordingController {
    std::vector<Command> sent;
    JobId next = 1;
    Controller c{[this](Command cmd) {
        sent.push_back(std::move(cmd));
        return next++;
    }};

    // The last command of type T sent, or null.
    template <class T>
    const T* last() const {
        for (auto it = sent.rbegin(); it != sent.rend(); ++it)
            if (auto* t = std::get_if<T>(&*it)) return t;
        return nullptr;
    }
    template <class T>
    int count() const {
        int n = 0;
        for (const auto& command : sent) n += std::holds_alternative<T>(command) ? 1 : 0;
        return n;
    }
};

}  // namespace t5s::ui::test
