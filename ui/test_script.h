#pragma once
// The app's test mode: a script of keyboard actions and checks, replayed frame by frame.
//   frames N                 run N frames
//   key CHORD                press and release, e.g. "ctrl+enter", "a", "shift+enter", "f1", "down"
//   type TEXT                UTF-8 characters to the focused text field (rest of the line; \n = newline)
//   wait_idle [SECONDS]      until no job runs (default 60 s; failure if it times out)
//   wait_model [SECONDS]     until a model is loaded
//   screenshot NAME [PANEL]  PNG of the window, or of one panel ("Workspace", "Model", ...)
//   expect_export FILE       FILE holds exactly the accepted/edited pairs made in this session
//   expect_candidates N      the workspace shows >= N candidates
//   log TEXT                 print a line
//   fill_history N           add N synthetic generations to the history (background thread; for
//                            measuring frame time while exporting a large history)
//   export_all FILE          export everything (not only accepted) to FILE, overwriting
//   train_history STEPS DIR  fine-tune the open model on the history's accepted pairs (Training panel)
//   show_past_runs           open the panel's "Past runs" section with the last run selected
//   expect_training_run N    the last run is listed from the history as completed with N points
//   expect_error TEXT        within 60 s, an error shown in a panel or the log contains TEXT (files the
//                            app cannot use: the message is on screen and the app keeps running)
// Quality scores (ui/test_driver_scores.cpp):
//   option JSON              merge GenerationOptions fields (JSON names) into the workspace settings as the
//                            sliders do, hot-swapped (null turns a threshold off), e.g. {"max_change":0.8}
//   sort RANK                the workspace's sort control: none | auto | similarity | back_score | fluency
//   expect_scores            every shown candidate has back_score, change, fluency (and similarity iff an
//                            embedding model is loaded), each in its range
//   expect_order             the shown candidates are in the order of the sort control, by their numbers
//   split_threshold NAME     move threshold NAME (min_similarity, max_change, ...) to between the shown
//                            candidates' values of its score, so that some fall inside and some outside
//   expect_window            each shown candidate's bar colour and outside mark agree with its numbers
//                            and the thresholds now; at least one is inside and one outside
//   expect_filtered          the last generation ran with the thresholds now set, returned only candidates
//                            inside them and dropped at least one, each with a reason its scores bear out
//   run_batch                the Batch panel's Run button (the loaded rows, per_row candidates each)
//   expect_batch_counts      the batch finished with candidates kept and dropped by reason
//   history_dropped          the History panel's "dropped" toggle on; waits until its first page lists a
//                            generation with dropped candidates (reasons and scores) and selects it
// Models window (ui/test_driver_models.cpp):
//   expect_models_open            the Models window is open (the app opens it when it starts with no model)
//   models_tab local|download     open the Models window on that tab
//   download ORG/NAME[@REV]       the Download tab's free field + Download
//   wait_download_progress [S [B]] the last download is fetching a file and has at least B bytes (default 1), not all
//   cancel_download               the last download's Cancel
//   resume_download               the last (cancelled / failed / interrupted) download's Resume
//   wait_download STATE [S]       the last download ended in STATE: done | cancelled | failed | interrupted
//                                 (interrupted: restored from the settings of a run that closed mid-download)
//   expect_local ORG/NAME         after a fresh listing, the Local tab has the row (parameters, size)
//   open_local ORG/NAME           select the row and press Open (then wait_model)
//   expect_loaded ORG/NAME        the loaded model is that row's folder
// Protected spans (ui/test_driver_spans.cpp); select in the source with real keys (shift+left), then ctrl+p:
//   protect DETECTOR on|off       a detector's checkbox (placeholders, numbers, urls, emails)
//   protect_regex TEXT            the regex field;  mark_label TEXT: the label new marks get
//   expect_marks N [LABEL]        the source has N marks (each labelled LABEL)
//   expect_source_spans N         the source shows at least N protected spans (marks and detected)
//   expect_span_candidates        every shown candidate has the source's spans, each at offsets holding its text
//   expect_forced                 a shown candidate carries the forced mark (and still keeps every span)
//   expect_batch_labels N         the loaded file gave spans for at least N rows
//   expect_batch_spans            the batch finished; each row protected at least the file's spans
//   history_spans                 the History panel selects the newest generation recorded with spans
// Advanced decoding and Paste settings (ui/test_driver_decoding.cpp):
//   paste_settings TEXT           the Paste settings box holds TEXT ("\n" = a new line), then Apply
//   expect_settings JSON          each generation setting given (JSON names) has this value now
//   expect_not_applied KEY...     the last paste listed exactly these keys as not applied
//   open_advanced                 expand the Advanced decoding section
//   field_text NAME TEXT          TEXT typed into the field's box in Advanced decoding
//   expect_field_error NAME       the field's box shows a message (the text was not applied)
// Recipes (ui/test_driver_recipes.cpp):
//   recipe NAME|PATH|none         the workspace's recipe picker: a shipped recipe by its file name, a file
//                                 by its path (Open file), or None
//   recipe_text TEXT              the recipe editor holds TEXT ("\n" = a new line; checked as typed)
//   expect_recipe_error TEXT      the recipe line shows the parser's message, one line containing TEXT
//   save_recipe PATH              Save as... PATH; waits until the file is written and is the chosen recipe
//   expect_routes STEPS           every shown candidate came by the route STEPS ("pivot > back"), each leg
//                                 with its text, and the candidates' texts are their last legs' texts
//   expect_batch_routes STEPS     the batch finished; every row done with a candidate shows the route STEPS,
//                                 its first candidate's text being the last leg's
// Lines starting with # and blank lines are skipped.
#include <optional>
#include <string>
#include <vector>

#include "keymap.h"

namespace t5s::ui {

struct ScriptStep {
    int line = 0;
    std::string op;
    std::string arg;  // the rest of the line (trimmed)
};

// Throws std::runtime_error("script:LINE: problem") on an unknown op.
std::vector<ScriptStep> parse_script(const std::string& text);
// "ctrl+shift+e" -> chord; nullopt if a part is unknown.
std::optional<KeyChord> parse_chord(const std::string& text);

// (source, target) pairs from an export file (JSONL with source/target, or CSV/TSV with a header).
std::vector<std::pair<std::string, std::string>> read_exported_pairs(const std::string& path);

// p50 / p99 / max of frame times in ms.
struct FrameStats {
    size_t frames = 0;
    double p50 = 0, p99 = 0, max = 0;
};
FrameStats frame_stats(std::vector<double> ms);

}  // namespace t5s::ui
