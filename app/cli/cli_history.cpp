// `t5studio history`: list / search the history database, and record decisions from scripts.
//   t5studio history --history PATH [--search Q] [--model M] [--accepted-only] [--limit N] [--after ID] [--json]
//   t5studio history --history PATH (--accept G:I | --reject G:I | --edit G:I=TEXT | --undo G | --redo G
//                                    | --delete G)... [--json]
// Decision flags are applied in command-line order, each in its own transaction.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "cli/commands.h"
#include "common/args.h"
#include "t5s/error.h"
#include "t5s/history_store.h"
#include "t5s/utc_time.h"

namespace t5s::cli {

namespace {

const std::set<std::string> kActionFlags = {"accept", "reject", "edit", "undo", "redo", "delete"};

struct Action {
    std::string flag;
    std::string value;
};

// Decisions are applied in command-line order.
std::vector<Action> actions_in_order(const Args& args) {
    std::vector<Action> out;
    for (const auto& [flag, value] : args.in_order())
        if (kActionFlags.count(flag)) out.push_back({flag, value});
    return out;
}

GenerationId parse_id(const std::string& flag, const std::string& text) {
    size_t used = 0;
    long long v = 0;
    try {
        v = std::stoll(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != text.size() || v <= 0 || text.empty())
        throw UsageError("--" + flag + " expects a generation id (a positive integer), got '" + text + "'");
    return v;
}

// "GEN:INDEX" (and "=TEXT" for --edit; the text may contain ':' and '=').
void parse_target(const std::string& flag, const std::string& value, GenerationId& id, int& index, std::string* text) {
    const std::string usage =
        "--" + flag + " expects GEN_ID:CAND_INDEX" + std::string(text ? "=TEXT" : "") + ", got '" + value + "'";
    std::string head = value;
    if (text) {
        auto eq = value.find('=');
        if (eq == std::string::npos) throw UsageError(usage);
        head = value.substr(0, eq);
        *text = value.substr(eq + 1);
    }
    auto colon = head.find(':');
    if (colon == std::string::npos) throw UsageError(usage);
    id = parse_id(flag, head.substr(0, colon));
    const std::string idx = head.substr(colon + 1);
    if (idx.empty() || idx.find_first_not_of("0123456789") != std::string::npos || idx.size() > 9) throw UsageError(usage);
    index = std::stoi(idx);
}

std::string one_line(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '\n') out += "\\n";
        else if (c == '\r') out += "\\r";
        else if (c == '\t') out += "\\t";
        else out.push_back(c);
    }
    return out;
}

int run_actions(HistoryStore& store, const std::vector<Action>& actions, bool json) {
    nlohmann::ordered_json events = nlohmann::ordered_json::array();
    for (const Action& a : actions) {
        nlohmann::ordered_json e;
        e["action"] = a.flag;
        GenerationId id = 0;
        int index = -1;
        std::string text;
        int64_t event_id = 0;
        if (a.flag == "accept" || a.flag == "reject") {
            parse_target(a.flag, a.value, id, index, nullptr);
            event_id = a.flag == "accept" ? store.accept(id, index) : store.reject(id, index);
        } else if (a.flag == "edit") {
            parse_target(a.flag, a.value, id, index, &text);
            event_id = store.edit(id, index, text);
        } else if (a.flag == "undo" || a.flag == "redo") {
            id = parse_id(a.flag, a.value);
            if (!store.get(id))
                throw Error(ErrorCode::InvalidArgument, "history " + store.path() + ": no generation with id " + a.value);
            event_id = a.flag == "undo" ? store.undo(id) : store.redo(id);
        } else {  // delete
            id = parse_id(a.flag, a.value);
            if (!store.remove(id))
                throw Error(ErrorCode::InvalidArgument, "history " + store.path() + ": no generation with id " + a.value);
        }
        e["generation_id"] = id;
        if (index >= 0) e["candidate_index"] = index;
        if (a.flag != "delete") e["event_id"] = event_id;
        e["applied"] = a.flag == "delete" || event_id != 0;
        if (!json) {
            std::cout << a.flag << " " << id;
            if (index >= 0) std::cout << ":" << index;
            if (a.flag == "delete") std::cout << ": deleted\n";
            else if (event_id != 0) std::cout << ": event " << event_id << "\n";
            else std::cout << ": nothing to " << a.flag << "\n";
        }
        events.push_back(std::move(e));
    }
    if (json)
        std::cout << nlohmann::ordered_json{{"events", events}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                  << "\n";
    return 0;
}

int run_list(HistoryStore& store, const Args& args, bool json) {
    HistoryQuery q;
    q.filter.text = args.get("search");
    q.filter.model = args.get("model");
    q.filter.accepted_only = args.has("accepted-only");
    q.limit = args.get_int("limit", 20, 1, kMaxHistoryPage);
    if (args.has("after")) q.after_id = parse_id("after", args.get("after"));
    const HistoryPage page = store.list(q);
    if (json) {
        nlohmann::ordered_json gens = nlohmann::ordered_json::array();
        for (const auto& g : page.generations) {
            nlohmann::ordered_json cands = nlohmann::ordered_json::array();
            for (const auto& c : g.candidates) {
                cands.push_back({{"index", c.index},
                                 {"text", c.text},
                                 {"score", c.score},
                                 {"state", to_string(c.state)},
                                 {"final_text", c.final_text}});
                if (!c.route.empty())
                    cands.back()["route"] = nlohmann::ordered_json::parse(route_json_text(c.route));  // a recipe's
            }
            gens.push_back({{"id", g.id},
                            {"input", g.input},
                            {"created_at", utc_iso8601(g.created_at_ms)},
                            {"created_at_ms", g.created_at_ms},
                            {"model", g.model_path},
                            {"model_hash", g.model_hash},
                            {"precision", g.precision},
                            {"device", g.device},
                            {"seed", g.seed},
                            {"origin", g.origin},
                            {"adapter", g.adapter},
                            {"adapter_version", g.adapter_version},
                            {"candidates", cands}});
            if (!g.label_json.empty())
                gens.back()["label"] = nlohmann::ordered_json::parse(g.label_json, nullptr, false);  // the row's label
            const nlohmann::ordered_json settings = nlohmann::ordered_json::parse(g.settings_json, nullptr, false);
            if (settings.is_object() && settings.contains("recipe"))
                gens.back()["recipe"] = settings["recipe"];  // {file, sha256}
        }
        nlohmann::ordered_json out = {{"generations", gens}};
        out["next_after_id"] = page.has_more ? nlohmann::ordered_json(page.next_after_id) : nlohmann::ordered_json(nullptr);
        std::cout << out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
        return 0;
    }
    for (const auto& g : page.generations) {
        std::cout << "#" << g.id << "  " << utc_iso8601(g.created_at_ms) << "  " << g.model_path
                  << (g.adapter.empty() ? "" : "  + adapter " + g.adapter) << "\n"
                  << "  input: " << one_line(g.input) << "\n";
        const std::string recipe = recipe_of_settings_json(g.settings_json);
        if (!recipe.empty()) std::cout << "  recipe: " << recipe << "\n";
        for (const auto& c : g.candidates) {
            std::cout << "  [" << c.index << "] " << to_string(c.state) << "  " << c.score << "  " << one_line(c.text);
            if (c.state == CandidateState::Edited) std::cout << "  ->  " << one_line(c.final_text);
            if (!c.route.empty()) std::cout << "  (via " << route_steps(c.route) << ")";
            std::cout << "\n";
        }
    }
    if (page.generations.empty()) std::cout << "(no generations)\n";
    if (page.has_more) std::cout << "more: --after " << page.next_after_id << "\n";
    return 0;
}

// --runs: the recorded training runs (app and `train --history`), newest first, with their curves.
int run_runs(HistoryStore& store, bool json) {
    const auto runs = store.training_runs(kMaxHistoryPage, json);
    if (json) {
        nlohmann::ordered_json out = nlohmann::ordered_json::array();
        for (const auto& r : runs) {
            nlohmann::ordered_json points = nlohmann::ordered_json::array();
            for (const auto& p : r.points)
                points.push_back(
                    {{"step", p.step},
                     {"elapsed_s", p.elapsed_s},
                     {"loss", p.loss >= 0 ? nlohmann::ordered_json(p.loss) : nlohmann::ordered_json()},
                     {"eval_loss", p.eval_loss >= 0 ? nlohmann::ordered_json(p.eval_loss) : nlohmann::ordered_json()},
                     {"lr", p.lr}});
            out.push_back(
                {{"id", r.id},
                 {"started_at_ms", r.started_at_ms},
                 {"updated_at_ms", r.updated_at_ms},
                 {"status", r.status},
                 {"model", r.model},
                 {"data", r.data},
                 {"out_dir", r.out_dir},
                 {"steps", r.steps},
                 {"total_steps", r.total_steps},
                 {"last_loss", r.last_loss >= 0 ? nlohmann::ordered_json(r.last_loss) : nlohmann::ordered_json()},
                 {"best_eval_loss", r.best_eval_loss >= 0 ? nlohmann::ordered_json(r.best_eval_loss) : nlohmann::ordered_json()},
                 {"final_dir", r.final_dir},
                 {"message", r.message},
                 {"points", points}});
        }
        std::cout << nlohmann::ordered_json{{"runs", out}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
        return 0;
    }
    for (const auto& r : runs) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "run %lld  %-14s %lld/%lld steps  loss %.4g  best eval %.4g  ",
                      static_cast<long long>(r.id), r.status.c_str(), static_cast<long long>(r.steps),
                      static_cast<long long>(r.total_steps), r.last_loss, r.best_eval_loss);
        std::cout << buf << r.model << " -> " << r.out_dir << "\n";
    }
    if (runs.empty()) std::cout << "no training runs recorded\n";
    return 0;
}

}  // namespace

const CommandSpec kHistorySpec = {
    "history",
    "list or search the history database; record decisions from scripts",
    {
        {"history", "PATH", "history database (made by the app or generate --history)"},
        {"search", "Q", "only generations whose input or a candidate contains Q (ASCII case-insensitive)"},
        {"model", "M", "only generations made with model M (its path or content hash)"},
        {"accepted-only", "", "only generations with an accepted or edited candidate"},
        {"limit", "N", "generations per page, 1.." + std::to_string(kMaxHistoryPage) + " (default 20), newest first"},
        {"after", "ID", "the page after generation ID (the next_after_id of the previous page)"},
        {"runs", "", "list the recorded training runs with their curves instead"},
        {"accept", "G:I", "accept candidate I of generation G", kRepeatable},
        {"reject", "G:I", "reject candidate I of generation G", kRepeatable},
        {"edit", "G:I=TEXT", "replace candidate I of generation G by TEXT (marks it edited)", kRepeatable},
        {"undo", "G", "undo the last decision on generation G", kRepeatable},
        {"redo", "G", "redo the last undone decision on generation G", kRepeatable},
        {"delete", "G", "delete generation G", kRepeatable},
        {"json", "", "print JSON on stdout"},
    }};

int run_history(const Argv& argv) {
    const Args args(argv, kHistorySpec);
    HistoryStoreOptions options;
    options.create_if_missing = false;
    HistoryStore store(args.require("history"), options);
    const bool json = args.has("json");
    if (args.has("runs")) return run_runs(store, json);
    const auto actions = actions_in_order(args);
    if (!actions.empty()) {
        for (const char* f : {"search", "model", "limit", "after", "accepted-only"})
            if (args.has(f)) throw UsageError(std::string("--") + f + " lists generations; it cannot be combined with decisions");
        return run_actions(store, actions, json);
    }
    return run_list(store, args, json);
}

}  // namespace t5s::cli
