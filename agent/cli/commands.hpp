#pragma once
// Subcommands of the ptxbench executable. Each takes the arguments after its
// name (argv[0] is "ptxbench <command>") and returns the process exit code:
//   0 success, 1 the job ran but found failures where the command promises none
//   (e.g. `eval` of a candidate that fails), 2 usage or input error, 3 infrastructure error.
namespace ptxbench::cli {

int cmd_run(int argc, char** argv);
int cmd_eval(int argc, char** argv);
int cmd_tasks(int argc, char** argv);
int cmd_export(int argc, char** argv);
int cmd_replay(int argc, char** argv);
int cmd_report(int argc, char** argv);
int cmd_serve(int argc, char** argv);
int cmd_merge(int argc, char** argv);
int cmd_evald(int argc, char** argv);
int cmd_mutate(int argc, char** argv);

}  // namespace ptxbench::cli
