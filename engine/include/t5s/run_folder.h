#pragma once
// One training run per output folder. A run's identity (its model, data, source prefix and the
// settings a resumed run cannot change) is saved in every checkpoint's trainer_state.json under
// "run"; before a run starts, prepare_run_folder and check_resume_identity decide whether the
// folder may be used, so that two runs never mix their checkpoints, logs and final model.
#include <string>
#include <vector>

#include "t5s/error.h"
#include "t5s/trainer.h"

namespace t5s {

// The folder and the request disagree (another run is there, or --resume names a different run).
// A front end reports it as a usage error: the user picks --resume, --overwrite or another folder.
class RunFolderRefused : public Error {
public:
    explicit RunFolderRefused(const std::string& message) : Error(ErrorCode::InvalidArgument, message) {}
};

enum class RunFolderMode {
    Fresh,      // the folder must hold no run (a new or empty folder, or one with unrelated files only)
    Resume,     // continue the run in the folder (check_resume_identity says whether it is the same run)
    Overwrite,  // clear the run in the folder first; a non-empty folder that holds no run is refused
};

// An exclusive lock on a run folder while a run writes it: flock on the folder itself, so nothing is
// created in it and the kernel lets go when the process dies (kill -9 included). Throws
// RunFolderRefused when another process holds it; where the file system has no flock, it holds nothing.
class RunFolderLock {
public:
    explicit RunFolderLock(const std::string& dir);
    ~RunFolderLock();
    RunFolderLock(const RunFolderLock&) = delete;
    RunFolderLock& operator=(const RunFolderLock&) = delete;

private:
    int fd_ = -1;
};

// Every mode refuses a folder another run is writing right now (RunFolderLock).
// Fresh: throws RunFolderRefused when the folder holds a run (naming it and --resume / --overwrite).
// Resume: throws when the folder has a final model but no checkpoint to continue from.
// Overwrite: removes the run's entries (each renamed aside first, so a crash never leaves a half
// checkpoint that looks complete) and returns their names; refuses a non-empty folder that holds
// no run (the user's home, a model folder): nothing there is the run's to clear.
std::vector<std::string> prepare_run_folder(const std::string& out_dir, RunFolderMode mode);

// The identity of the run `options` describes, as a JSON object (paths absolute).
std::string run_identity_json(const TrainingOptions& options);

// The newest complete checkpoint in `out_dir` ("" when none): the one --resume continues.
std::string newest_checkpoint(const std::string& out_dir);

// Throws RunFolderRefused when `checkpoint_dir` was saved by a run whose identity differs from
// `options`', naming every field that differs with both values. A checkpoint saved before runs had
// an identity is accepted (returns false: not checked); true when the identities match.
bool check_resume_identity(const TrainingOptions& options, const std::string& checkpoint_dir);

}  // namespace t5s
