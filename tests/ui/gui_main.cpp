// The desktop app without the CLI subcommands (same t5s_run_gui as t5studio, app/desktop): lets the UI tests
// run when other parts of the app are mid-change.
int t5s_run_gui(int argc, char** argv);
int main(int argc, char** argv) { return t5s_run_gui(argc, argv); }
